// Match history and replays.  The server rebuilds the finished deals from the stored log
// (GET /api/tables/{id}/history, for a seat token of that table), so a replay never
// depends on what this page remembers and works after a server restart.

import { cardElement, sortCodes } from "./cards.js";
import { cardName, t } from "./i18n.js";
import { isPlaceholder } from "./names.js";
import { $, describeMove, h } from "./render.js";
import { scoreboard } from "./scoreboard.js";
import { showVerification } from "./verify.js";

/** The finished deals of `table`, or an Error whose `code` is the server's reason. */
export async function fetchHistory(table, token) {
  const res = await fetch(`/api/tables/${encodeURIComponent(table)}/history`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(data.error?.message || res.statusText);
    err.code = data.error?.code || `http_${res.status}`;
    throw err;
  }
  return data;
}

/** `#replay=<table>&match=<m>&deal=<d>`: the link to one deal's replay, or null. */
export function replayFromHash(hash = location.hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const table = p.get("replay");
  if (!table) return null;
  return { table, match: Number(p.get("match") || 0), deal: Number(p.get("deal") || 1) };
}

export function replayLink(table, deal) {
  return new URL(`/#replay=${encodeURIComponent(table)}&match=${deal.match_no}&deal=${deal.deal_no}`, location.href).href;
}

/** The hands after the first `step` moves of `deal`. */
export function handsAt(deal, step) {
  const hands = deal.hands.map((hand) => [...hand]);
  for (const move of deal.moves.slice(0, step)) {
    for (const card of move.cards) hands[move.seat].splice(hands[move.seat].indexOf(card), 1);
  }
  return hands;
}

const signed = (n) => (n > 0 ? `+${n}` : String(n));

/** The history sheet: a list of deals, and a step-by-step replay of one of them. */
export class HistorySheet {
  constructor({ dialog, mySeat, onCopied }) {
    Object.assign(this, { dialog, mySeat, onCopied });
    this.body = $(".sheet-body", dialog);
    this.data = null;
  }

  nameOf(seat) {
    const info = this.data.seats.find((s) => s.seat === seat);
    if (seat === this.mySeat()) return t("seat.you");
    if (info && (info.kind === "bot" || !isPlaceholder(info.name, seat))) return info.name;
    return t("seat.player", { n: seat + 1 });
  }

  async open(table, token, pick = null) {
    if (!this.dialog.open) this.dialog.showModal();
    this.body.replaceChildren(this.head(t("history.title")), h("p", { class: "note", text: t("history.loading") }));
    try {
      this.data = await fetchHistory(table, token);
    } catch (err) {
      this.body.replaceChildren(this.head(t("history.title")), h("p", { class: "note", role: "alert", text: t("history.error", { reason: err.message }) }));
      return;
    }
    const chosen = pick && this.data.deals.find((d) => d.match_no === pick.match && d.deal_no === pick.deal);
    if (pick && !chosen) this.list(t("history.gone"));
    else if (chosen) this.replay(chosen, 0);
    else this.list();
  }

  head(title, back = null) {
    return h(
      "header",
      { class: "sheet-head" },
      back ? h("button", { type: "button", class: "btn btn-back", onclick: back, text: t("history.back") }) : null,
      h("h2", { id: "history-title", text: title }),
      h("button", { type: "button", class: "icon-btn close", "aria-label": t("common.close"), onclick: () => this.dialog.close(), text: "✕" }),
    );
  }

  list(notice = "") {
    const me = this.mySeat();
    const deals = [...this.data.deals].reverse();
    const rows = deals.map((deal) =>
      h(
        "li",
        { class: "history-row" },
        h("span", { class: "history-what", text: t("history.deal", { m: deal.match_no + 1, n: deal.deal_no }) }),
        h("span", { class: "history-winner", text: t("history.won", { name: this.nameOf(deal.result.winner) }) }),
        h("span", { class: "history-score", text: signed(deal.result.deal_totals[me]) }),
        h("button", { type: "button", class: "btn btn-replay", text: t("history.replay"), onclick: () => this.replay(deal, 0) }),
      ),
    );
    // Each match's scoreboard, newest match first, its deals in the order they were played.
    const matches = [...new Set(this.data.deals.map((d) => d.match_no))].reverse();
    const boards = matches.map((m) =>
      h(
        "section",
        { class: "history-board", "data-match": String(m) },
        h("h3", { text: t("history.match", { m: m + 1 }) }),
        scoreboard(
          this.data.deals.filter((d) => d.match_no === m).map((d) => d.result),
          { nameOf: (s) => this.nameOf(s), me },
        ),
      ),
    );
    this.body.replaceChildren(
      this.head(t("history.title")),
      notice ? h("p", { class: "note", role: "alert", text: notice }) : "",
      rows.length ? h("ol", { class: "history-list" }, rows) : h("p", { class: "note", text: t("history.none") }),
      ...boards,
    );
    // The fair-shuffle check of each match this browser played (verify.js).
    boards.forEach((board, i) => showVerification(board, this.data.table, matches[i]));
  }

  replay(deal, step) {
    const total = deal.moves.length;
    step = Math.max(0, Math.min(total, step));
    const hands = handsAt(deal, step);
    const last = step > 0 ? deal.moves[step - 1] : null;
    const go = (n) => () => this.replay(deal, n);
    const seats = [0, 1, 2].map((seat) =>
      h(
        "div",
        { class: `replay-seat${last?.seat === seat ? " just-moved" : ""}`, "data-seat": String(seat) },
        h("div", { class: "replay-name", text: `${this.nameOf(seat)} · ${t("history.held", { n: hands[seat].length })}` }),
        h("div", { class: "replay-hand" }, sortCodes(hands[seat]).map((c) => cardElement(c, { name: cardName(c), size: "mini" }))),
      ),
    );
    const said = last ? `${this.nameOf(last.seat)}: ${describeMove(last)}` : t("history.start");
    const played = last && last.cards.length ? h("div", { class: "replay-play" }, last.cards.map((c) => cardElement(c, { name: cardName(c), size: "mini" }))) : "";
    const end = step === total ? h("p", { class: "replay-result", text: t("history.result", { name: this.nameOf(deal.result.winner) }) }) : "";
    const slider = h("input", { type: "range", min: "0", max: String(total), value: String(step), class: "replay-slider", "aria-label": t("history.step", { n: step, of: total }) });
    slider.addEventListener("input", () => this.replay(deal, Number(slider.value)));
    const copy = h("button", {
      type: "button",
      class: "btn",
      id: "btn-replay-link",
      text: t("history.copyLink"),
      onclick: async () => {
        const url = replayLink(this.data.table, deal);
        // Shown first: without clipboard permission it can still be copied by hand.
        link.value = url;
        link.hidden = false;
        try {
          await navigator.clipboard.writeText(url);
          this.onCopied();
        } catch {
          link.select();
        }
      },
    });
    const link = h("input", { type: "text", readonly: true, class: "replay-link", hidden: true, "aria-label": t("history.copyLink") });
    this.body.replaceChildren(
      this.head(t("history.deal", { m: deal.match_no + 1, n: deal.deal_no }), () => this.list()),
      h("p", { class: "replay-step", "aria-live": "polite", text: `${t("history.step", { n: step, of: total })} · ${said}` }),
      played,
      ...seats,
      end,
      h(
        "div",
        { class: "replay-controls", role: "group" },
        h("button", { type: "button", class: "btn", "aria-label": t("history.first"), onclick: go(0), text: "«" }),
        h("button", { type: "button", class: "btn", id: "btn-replay-back", "aria-label": t("history.prev"), onclick: go(step - 1), text: "‹" }),
        h("button", { type: "button", class: "btn", id: "btn-replay-next", "aria-label": t("history.next"), onclick: go(step + 1), text: "›" }),
        h("button", { type: "button", class: "btn", id: "btn-replay-end", "aria-label": t("history.last"), onclick: go(total), text: "»" }),
      ),
      slider,
      h("div", { class: "sheet-actions" }, copy),
      link,
    );
  }
}
