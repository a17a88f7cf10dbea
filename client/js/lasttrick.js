// The last trick: a look back at the trick before the current one, during play.  Nothing
// here knows when a trick ends: each state says which of the deal's moves (`view.moves`)
// belong to the current trick (`view.trick`, its tail), so the moves between the start the
// previous state showed and the start this one shows are the trick that just finished.

import { cardElement } from "./cards.js";
import { cardName, t } from "./i18n.js";
import { groupOrder, h, seatName } from "./render.js";

/** Follows the states of one seat or spectator and keeps the last finished trick. */
export class LastTrick {
  constructor() {
    this.key = null; // the deal the starts below belong to
    this.start = 0; // index in view.moves where the current trick starts
    this.moves = null; // the last finished trick's moves, or null before one finished
  }

  /** Read one state (`dealKey` names the deal: a new one forgets the old deal's trick). */
  follow(view, dealKey) {
    const start = view.moves.length - view.trick.length;
    if (dealKey !== this.key) {
      this.key = dealKey;
      this.start = start;
      this.moves = null;
      return;
    }
    if (start > this.start) {
      this.moves = view.moves.slice(this.start, start);
      this.start = start;
    }
  }
}

/** Draw the switch: usable during a deal once a trick has finished. */
export function renderLastTrickButton(el, { view, last }) {
  const usable = !view.result && Boolean(last.moves?.length);
  el.setAttribute("aria-disabled", String(!usable));
  el.title = t(usable ? "lastTrick.show" : "lastTrick.none");
  el.setAttribute("aria-label", el.title);
  return usable;
}

/** The panel's content: each move of the last trick in order, its seat and its cards. */
export function renderLastTrick(el, { view, table, last }) {
  const rows = (last.moves || []).map((move) =>
    h(
      "li",
      { class: `lt-move${move.kind === "pass" ? " pass" : ""}`, "data-seat": String(move.seat) },
      h("span", { class: "lt-who", text: seatName(table, view, move.seat) }),
      move.kind === "pass"
        ? h("span", { class: "lt-pass", text: t("move.pass") })
        : h(
            "span",
            { class: "lt-cards card-row", role: "img", "aria-label": `${t(`kind.${move.kind}`)}: ${move.cards.map(cardName).join(", ")}` },
            groupOrder(move.cards).map((c) => cardElement(c, { name: cardName(c), size: "mini" })),
          ),
    ),
  );
  el.replaceChildren(h("h2", { class: "lt-title", id: "last-trick-title", text: t("lastTrick.title") }), h("ol", { class: "lt-list" }, rows));
}
