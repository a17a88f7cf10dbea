// Celebrations: a short banner for a bomb, an airplane, a shut-out and a match won.
// Every fact is the server's: a play's `kind` in its `played` event, `view.result.shut_out`
// for the deal that just ended, the `match_ended` event's `winners`; the client never
// decides what a play is or who was shut out.  The banner sits over the table, between
// the top bar and our strip (never over the status line, hand or buttons), lets every tap
// through, and goes after a moment.  With reduced motion it is a still badge.

import { t } from "./i18n.js";
import { reducedMotion } from "./motion.js";
import { h, seatName } from "./render.js";

// How long each moment stays; a frame with several shows them together for the longest.
export const SHOW_MS = { bomb: 1800, airplane: 1800, shutOut: 2600, matchWin: 3200 };

/** The moments of one state frame worth celebrating, in the order they happened. */
export function moments(events, view) {
  const out = [];
  for (const ev of events || []) {
    if (ev.type === "played" && (ev.kind === "bomb" || ev.kind === "airplane")) {
      out.push({ kind: ev.kind, seats: [ev.seat] });
    } else if (ev.type === "deal_ended" && view.result) {
      const shut = view.result.shut_out.flatMap((yes, seat) => (yes ? [seat] : []));
      if (shut.length) out.push({ kind: "shutOut", seats: shut });
    } else if (ev.type === "match_ended" && (view.watching || ev.winners.includes(view.seat))) {
      // Our own win (or, watching, whoever won): a loser's screen is not told to cheer.
      out.push({ kind: "matchWin", seats: ev.winners });
    }
  }
  return out;
}

export class Celebration {
  /** `el`: a `popover="manual"` element (top layer, so it can show over an open sheet);
   * `area()`: the box it may use (the table's, between the top bar and our strip). */
  constructor(el, area) {
    this.el = el;
    this.area = area;
    this.timer = null;
    // What was shown, newest last (the last 20): for the page's read-only state.
    this.log = [];
  }

  show(found, { view, table }) {
    if (!found.length) return;
    const names = (seats) => seats.map((s) => seatName(table, view, s)).join(t("match.and"));
    const lines = found.map((m) => {
      const title = m.kind === "matchWin" ? t(m.seats.includes(view.seat) && !view.watching ? "match.youWin" : "match.winner", { name: names(m.seats) }) : t(`celebrate.${m.kind}`);
      const who = m.kind === "matchWin" ? "" : names(m.seats);
      return h("div", { class: `moment moment-${m.kind}`, "data-kind": m.kind }, h("span", { class: "burst", "aria-hidden": "true" }), h("b", { text: title }), who ? h("small", { text: who }) : null);
    });
    const still = reducedMotion();
    this.el.replaceChildren(...lines);
    this.el.dataset.kinds = found.map((m) => m.kind).join(" ");
    this.el.dataset.motion = still ? "still" : "moving";
    this.el.classList.toggle("go", !still);
    this.log.push(...found.map((m) => ({ kind: m.kind, seats: m.seats, text: lines[found.indexOf(m)].textContent })));
    this.log.splice(0, Math.max(0, this.log.length - 20));
    this.open();
    this.place();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.hide(), Math.max(...found.map((m) => SHOW_MS[m.kind])));
  }

  open() {
    this.el.hidden = false;
    if (this.el.showPopover && !this.el.matches(":popover-open")) this.el.showPopover();
  }

  /** Over the table's middle, inside its box. */
  place() {
    const box = this.area();
    const width = Math.min(box.width - 16, 420);
    this.el.style.width = `${Math.max(0, Math.round(width))}px`;
    this.el.style.maxHeight = `${Math.max(0, Math.round(box.height - 8))}px`;
    this.el.style.left = `${Math.round(box.left + (box.width - width) / 2)}px`;
    const height = Math.min(this.el.getBoundingClientRect().height, box.height - 8);
    this.el.style.top = `${Math.round(box.top + Math.max(4, (box.height - height) / 2))}px`;
  }

  /** A modal sheet opened after us covers the top layer: step back on top of it. */
  raise() {
    if (this.el.hidden || !this.el.hidePopover) return;
    this.el.hidePopover();
    this.el.showPopover();
  }

  hide() {
    clearTimeout(this.timer);
    if (this.el.hidePopover && this.el.matches(":popover-open")) this.el.hidePopover();
    this.el.hidden = true;
    this.el.classList.remove("go");
  }
}
