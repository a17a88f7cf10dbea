// The deal-by-deal scoreboard: one row per finished deal of a match, one column per seat,
// each cell that deal's total with its bomb points and a shut-out marked, and the match
// totals underneath.  Everything comes from the server's deal results (`view.results`
// live, `deal.result` in the history); nothing is added up here.

import { t } from "./i18n.js";
import { h } from "./render.js";

const signed = (n) => (n > 0 ? `+${n}` : String(n));

/**
 * The scoreboard table of `results` (the server's DealResult objects of one match, in
 * order).  `nameOf(seat)` names a column; `me` is our seat (its column first), or 0.
 */
export function scoreboard(results, { nameOf, me = 0 }) {
  const order = [me, (me + 1) % 3, (me + 2) % 3];
  const head = h(
    "thead",
    {},
    h("tr", {}, h("th", { scope: "col", text: t("scoreboard.deal") }), order.map((s) => h("th", { scope: "col", class: s === me ? "mine" : null, text: nameOf(s) }))),
  );
  const rows = results.map((r) =>
    h(
      "tr",
      { "data-deal": String(r.deal_no) },
      h("th", { scope: "row", text: String(r.deal_no) }),
      order.map((s) => {
        const marks = [];
        if (r.bomb_points[s]) marks.push(h("span", { class: "mark bomb", "data-mark": "bomb", text: t("scoreboard.bomb", { n: signed(r.bomb_points[s]) }) }));
        if (r.shut_out[s]) marks.push(h("span", { class: "mark shut", "data-mark": "shut", text: t("result.shutOut") }));
        const total = r.deal_totals[s];
        return h(
          "td",
          { "data-seat": String(s), class: s === r.winner ? "winner" : null },
          h("b", { class: total > 0 ? "good" : total < 0 ? "bad" : null, text: signed(total) }),
          s === r.winner ? h("span", { class: "crown", "aria-label": t("result.dealWinner"), text: " ★" }) : null,
          marks.length ? h("span", { class: "marks" }, marks) : null,
        );
      }),
    ),
  );
  const last = results[results.length - 1];
  const foot = last
    ? h(
        "tfoot",
        {},
        h("tr", {}, h("th", { scope: "row", text: t("scoreboard.total") }), order.map((s) => h("td", { "data-seat": String(s) }, h("b", { text: signed(last.match_totals[s]) })))),
      )
    : null;
  return h(
    "div",
    { class: "table-scroll scoreboard" },
    h("table", { class: "result-table scoreboard-table" }, h("caption", { text: t("scoreboard.title") }), head, h("tbody", {}, rows), foot),
  );
}
