// Drawing the table from the server's state message.  Everything shown here is read from
// `view` (the engine's SeatView for our seat) and `table` (seat names, kinds, levels).

import { RANKS, cardBack, cardElement, rankLabel, sortCodes } from "./cards.js";
import { cardName, t } from "./i18n.js";
import { isPlaceholder } from "./names.js";
import { scoreboard } from "./scoreboard.js";

export const $ = (sel, root = document) => root.querySelector(sel);

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/** Put `nodes` in `el`, keeping in place each child that comes out the same (tags,
 * attributes and text, as `isEqualNode` compares them): only the others are removed
 * and the new ones put around the kept.  The live parts of the page are drawn again with
 * every state; a button replaced (or moved) while a finger presses it takes the release
 * on a node the press never touched, and the browser sends no click.  Handlers are not
 * compared, so whatever a handler acts on must show in the node (an attribute or its
 * text). */
export function redraw(el, ...nodes) {
  const old = [...el.childNodes];
  // Each new node's equal among the old children, taken in order so none has to move.
  const kept = nodes.map(() => null);
  let from = 0;
  nodes.forEach((node, i) => {
    const j = old.findIndex((child, k) => k >= from && node.isEqualNode(child));
    if (j >= 0) {
      kept[i] = old[j];
      from = j + 1;
    }
  });
  const keep = new Set(kept);
  for (const child of old) if (!keep.has(child)) child.remove();
  let next = null;
  for (let i = nodes.length - 1; i >= 0; i -= 1) {
    if (!kept[i]) el.insertBefore(nodes[i], next);
    next = kept[i] || nodes[i];
  }
}

/** Where each seat sits on screen: you at the bottom, next in turn on the right. */
export function placement(me) {
  return { me, right: (me + 1) % 3, left: (me + 2) % 3 };
}

export function seatName(table, view, seat) {
  if (seat === view.seat && !view.watching) return t("seat.you");
  const info = table?.seats?.find((s) => s.seat === seat);
  // Bots have names (Anna, Ben), and so do people who chose one; the others are
  // numbered in our own language.
  if (info?.kind === "bot" && info.name) return info.name;
  if (info && !isPlaceholder(info.name, seat)) return info.name;
  return t("seat.player", { n: seat + 1 });
}

export function seatInfo(table, seat) {
  return table?.seats?.find((s) => s.seat === seat) || { seat, kind: "human", name: "", level: null, connected: true };
}

const signed = (n) => (n > 0 ? `+${n}` : String(n));

/** A seat's score right now: the match total plus bomb points already paid in this deal. */
export function liveTotal(view, seat) {
  return view.totals[seat] + (view.result ? 0 : view.bomb_points?.[seat] ?? 0);
}

/** A play's cards with the biggest groups first: "9 9 9 3 7" reads as a trio plus two. */
export function groupOrder(codes) {
  const count = {};
  for (const c of codes) count[c[0]] = (count[c[0]] || 0) + 1;
  const order = new Map(sortCodes(codes).map((c, i) => [c, i]));
  return [...codes].sort((a, b) => count[b[0]] - count[a[0]] || order.get(a) - order.get(b));
}

/** "Pair 7 7": a move in words, for the status line and announcements. */
export function describeMove(move) {
  if (move.kind === "pass") return t("move.pass");
  const ranks = groupOrder(move.cards).map((c) => rankLabel(c[0])).join(" ");
  return t("move.play", { kind: t(`kind.${move.kind}`), ranks });
}

function lastMoves(view) {
  const last = [null, null, null];
  for (const m of view.trick || []) last[m.seat] = m;
  return last;
}

function avatar(name, seat, kind) {
  const letter = (name || "?").trim().charAt(0).toUpperCase();
  return h("span", { class: `avatar av-${seat} ${kind}`, "aria-hidden": "true", text: letter });
}

function badges(view, seat) {
  const out = [];
  if (view.last_card?.[seat]) out.push(h("span", { class: "badge alarm", text: t("badge.lastCard") }));
  const mine = seat === view.seat && !view.watching;
  if (view.turn === seat) out.push(h("span", { class: "badge turn", text: t(mine ? "badge.yourTurn" : "badge.turn") }));
  else if (view.turn !== null && view.leader === seat && view.table) {
    out.push(h("span", { class: "badge lead", text: t("badge.onTop") }));
  }
  return out;
}

/** One opponent's panel: who, what level, how many cards, warnings, whose turn. */
export function renderSeat(el, { view, table, seat, side }) {
  const info = seatInfo(table, seat);
  const name = seatName(table, view, seat);
  const count = view.counts[seat];
  const classes = ["seat-card"];
  if (view.turn === seat) classes.push("is-turn");
  if (view.last_card?.[seat]) classes.push("is-last");
  if (info.kind === "human" && !info.connected) classes.push("is-away");
  const level = info.kind === "bot" ? t("seat.bot", { level: t(`level.${info.level || "normal"}`) }) : t("seat.human");
  const fan = h("span", { class: "fan", "aria-hidden": "true" }, ...Array.from({ length: Math.min(count, 8) }, () => cardBack("tiny")));
  el.replaceChildren(
    h(
      "div",
      { class: classes.join(" ") },
      avatar(name, seat, info.kind),
      h(
        "div",
        { class: "who" },
        h("span", { class: "name", id: `seat-${side}-name`, text: name }),
        h("span", { class: "level", text: info.kind === "human" && !info.connected ? t(info.auto ? "seat.awayAuto" : "seat.away") : level }),
      ),
      h(
        "div",
        { class: "count", title: t("seat.cardsLeft", { n: count }) },
        fan,
        h("b", { class: "count-n", "aria-label": t("seat.cardsLeft", { n: count }), text: String(count) }),
      ),
      h("div", { class: "score", "aria-label": t("seat.score", { n: liveTotal(view, seat) }), text: signed(liveTotal(view, seat)) }),
      h("div", { class: "badges" }, badges(view, seat)),
    ),
  );
}

/** The player's own strip above the hand: name, score and turn badges. */
export function renderMe(el, { view, table }) {
  const me = view.seat;
  el.replaceChildren(
    avatar(seatName(table, view, me), me, "human"),
    h("span", { class: "name", id: "me-label", text: seatName(table, view, me) }),
    h("span", { class: "score", "aria-label": t("seat.score", { n: liveTotal(view, me) }), text: signed(liveTotal(view, me)) }),
    // A spectator sees no hand at the bottom: the watched seat's count stands in for it.
    ...(view.watching ? [h("b", { class: "count-n me-count", title: t("seat.cardsLeft", { n: view.counts[me] }), "aria-label": t("seat.cardsLeft", { n: view.counts[me] }), text: String(view.counts[me]) })] : []),
    ...badges(view, me),
  );
  el.parentElement.parentElement.classList.toggle("is-turn", view.turn === me);
}

/** What each seat has put down in the current trick (or "pass"), with the play to beat marked. */
export function renderPiles(piles, { view, table, fresh, autoMade = () => false }) {
  const last = lastMoves(view);
  for (const [side, seat] of Object.entries(placement(view.seat))) {
    const el = piles[side];
    const move = last[seat];
    el.classList.toggle("is-turn", view.turn === seat);
    const held = seat !== view.seat ? view.revealed?.[seat] : null;
    if (view.result && held?.length) {
      // The deal is over: the server now shows what this seat still held.
      const cards = sortCodes(held).map((c) => cardElement(c, { name: cardName(c), size: "pile" }));
      el.replaceChildren(
        h(
          "figure",
          { class: "play revealed", style: `--n:${cards.length}` },
          h("div", { class: "play-cards" }, cards),
          h("figcaption", { text: t("reveal.held", { name: seatName(table, view, seat), n: held.length }) }),
        ),
      );
      continue;
    }
    if (!move) {
      const waiting = view.turn === seat && seat !== view.seat;
      el.replaceChildren(waiting ? h("div", { class: "thinking", "aria-hidden": "true" }, h("i"), h("i"), h("i")) : "");
      continue;
    }
    const isNew = fresh.has(move);
    if (move.kind === "pass") {
      const auto = autoMade(move);
      el.replaceChildren(h("div", { class: `pass-bubble${isNew ? " enter" : ""}${auto ? " auto" : ""}`, text: t(auto ? "move.autoPass" : "move.pass") }));
      continue;
    }
    const onTop = view.table && view.table.seat === seat && view.table.cards.join() === move.cards.join();
    const cards = groupOrder(move.cards).map((c) => cardElement(c, { name: cardName(c), size: "pile" }));
    el.replaceChildren(
      h(
        "figure",
        { class: `play${isNew ? " enter" : ""}${onTop ? " on-top" : ""}${move.kind === "bomb" ? " bomb" : ""}`, style: `--n:${cards.length}` },
        h("div", { class: "play-cards" }, cards),
        h("figcaption", { text: `${seatName(table, view, seat)} · ${t(`kind.${move.kind}`)}` }),
      ),
    );
  }
}

/** Per rank, how many cards the two opponents still hold together. */
export function renderCounter(el, view, show) {
  el.hidden = !show;
  if (!show) return;
  const cells = [...RANKS].map((r) => {
    const n = view.counter?.[r] ?? 0;
    return h(
      "li",
      { class: `cnt${n === 0 ? " gone" : ""}${n === 4 ? " bomb-risk" : ""}`, "aria-label": t("counter.cell", { rank: t(`rank.${r}`), n }) },
      h("span", { class: "cnt-r", "aria-hidden": "true", text: rankLabel(r) }),
      h("span", { class: "cnt-n", "aria-hidden": "true", text: String(n) }),
    );
  });
  el.replaceChildren(
    h("h2", { class: "counter-label", id: "counter-label", title: t("counter.title"), text: t("counter.label") }),
    h("ul", { title: t("counter.title"), "aria-labelledby": "counter-label" }, cells),
  );
}

/** The line under the table that says what is going on for us right now. */
export function statusText({ view, table }) {
  if (view.result) return t("status.dealOver");
  const me = view.seat;
  if (view.turn === me) {
    if (view.must_include) return t("status.mustInclude", { card: cardName(view.must_include) });
    if (!view.table) return t("status.youLead");
    if (view.can_pass) return t("status.cannotBeat");
    return t("status.beat", { name: seatName(table, view, view.table.seat), move: describeMove(view.table) });
  }
  if (view.turn === null || view.turn === undefined) return "";
  return t("status.waiting", { name: seatName(table, view, view.turn) });
}

/** The end-of-deal panel: per seat the scoring lines, then the match standing. */
export function renderResult(el, { view, table, onNext, onNewMatch, onClose }) {
  const r = view.result;
  const me = view.seat;
  const order = [me, (me + 1) % 3, (me + 2) % 3];
  const winnerName = seatName(table, view, r.winner);
  const head = h(
    "header",
    { class: "sheet-head" },
    h("h2", { id: "result-title", text: r.winner === me ? t("result.youWin") : t("result.winner", { name: winnerName }) }),
    h("span", { class: "deal-no", text: t("result.dealOf", { n: r.deal_no, of: view.deals }) }),
  );
  const cols = ["cardsLeft", "shutOut", "bombs", "cardPoints", "dealTotal", "matchTotal"];
  const rows = order.map((s) =>
    h(
      "tr",
      { class: `${s === r.winner ? "winner" : ""}${s === me ? " mine" : ""}`.trim() || null },
      h("th", { scope: "row" }, avatar(seatName(table, view, s), s, seatInfo(table, s).kind), seatName(table, view, s), s === r.winner ? h("span", { class: "crown", "aria-label": t("result.dealWinner"), text: " ★" }) : null),
      h("td", { "data-col": "cardsLeft", text: String(r.cards_left[s]) }),
      h("td", { "data-col": "shutOut", class: r.shut_out[s] ? "bad" : null, text: r.shut_out[s] ? t("result.yes") : "—" }),
      h("td", { "data-col": "bombs", text: r.bomb_points[s] ? signed(r.bomb_points[s]) : "0" }),
      h("td", { "data-col": "cardPoints", text: signed(r.card_points[s]) }),
      h("td", { "data-col": "dealTotal", class: r.deal_totals[s] > 0 ? "good" : r.deal_totals[s] < 0 ? "bad" : null }, h("b", { text: signed(r.deal_totals[s]) })),
      h("td", { "data-col": "matchTotal", text: signed(r.match_totals[s]) }),
    ),
  );
  const tableEl = h(
    "table",
    { class: "result-table" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col", text: t("result.player") }), cols.map((c) => h("th", { scope: "col", text: t(`result.${c}`) })))),
    h("tbody", {}, rows),
  );
  const parts = [head, h("div", { class: "table-scroll" }, tableEl)];
  // At the match's end, every deal of it; the server's results, newest last.
  if (view.match_over && view.results.length > 1) parts.push(scoreboard(view.results, { nameOf: (s) => seatName(table, view, s), me }));
  if (view.match_over) {
    const names = view.winners.map((s) => seatName(table, view, s));
    const youWon = view.winners.includes(me);
    let text;
    if (names.length === 1) text = youWon ? t("match.youWin") : t("match.winner", { name: names[0] });
    else text = t("match.tie", { names: names.join(t("match.and")) });
    parts.push(h("p", { class: `match-banner${youWon ? " won" : ""}`, role: "status", text }));
  } else if (view.deals > 1) {
    parts.push(h("p", { class: "note", text: t("result.dealsLeft", { n: view.deals - r.deal_no }) }));
  }
  // What is learnt about the match after it is drawn (the rating's change, the deal's
  // verification) goes in a place of its own, kept while the same match's result is
  // drawn again.
  if (view.match_over) parts.push(resultExtras(el, `${table?.id}:${table?.match_no ?? 0}`));
  const actions = h("div", { class: "sheet-actions" }, h("button", { type: "button", class: "btn", onclick: onClose, text: t("result.viewTable") }));
  // A spectator watches: dealing on or starting a match is for the seats.
  const button = view.match_over
    ? h("button", { type: "button", class: "btn btn-play", id: "btn-new-match", onclick: onNewMatch, text: t("result.newMatch") })
    : h("button", { type: "button", class: "btn btn-play", id: "btn-next-deal", onclick: onNext, text: t("result.nextDeal") });
  if (!view.watching) actions.append(button);
  parts.push(actions);
  // Each state while the sheet is open draws it again: a friend's new name changes a
  // row, and the button under a finger must stay the node the finger lifts from.
  redraw(el, ...parts);
}

/** The result's place for what comes after it is drawn, for the match `key`: the one
 * already in `el` if it is that match's, else an empty one. */
function resultExtras(el, key) {
  const kept = resultExtrasOf(el);
  return kept?.dataset.match === key ? kept : h("div", { class: "result-extras", "data-match": key });
}

/** Where `renderResult` lets the rating's change and the verification go. */
export function resultExtrasOf(el) {
  return el.querySelector(":scope > .result-extras");
}
