// "Verify this match": the browser checks the shuffle commitments with the frames it
// received, the same check as `python -m server.verify` makes of a saved record
// (docs/protocol.md, "Provably fair shuffles"), for each deal:
//
//   commitment  the commitment published for the deal (one, never changed) equals
//               sha256("paodekuai-deal/v1/{salt}/{seed}/{deal_no}") of the revealed seed;
//   cards       the cards this seat was dealt (its hand on the first frame of the deal,
//               with what it had already played) are its 16 of the deck that seed and
//               the deal's client seeds shuffle (shuffle.js, the engine's shuffle);
//   our seed    the client seed this browser gave for the deal (the server said it had
//               it, and did not refuse it) is the one the deal mixed.
//
// While a match is played this keeps, per deal, only what the check needs (a few
// strings), in localStorage with the last MAX_MATCHES matches, so the history can show
// the check too. The revealed seed is a 63-bit integer, beyond what a JavaScript number
// holds: net.js parses frames with exactjson.js, which keeps the exact digits sent.

import { t } from "./i18n.js";
import { h } from "./render.js";
import { exactText } from "./exactjson.js";
import { dealHands, sha256Hex } from "./shuffle.js";

const KEY = "pdk.fairness";
const MAX_MATCHES = 10;
// The error codes with which the server refuses a client seed (server/fairness.py).
const REFUSALS = new Set(["entropy_closed", "entropy_given", "rate_limited"]);

function loadAll() {
  try {
    const list = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

/** The record of one match this browser played at `table`, or null. */
export function matchRecord(table, match) {
  return loadAll().find((r) => r.table === table && r.match === match) || null;
}

/** Keeps, from each `state` frame a seat receives, what the check of its match needs. */
export class FairnessLog {
  constructor() {
    this.records = loadAll();
    // The seed we sent for a commitment, until a frame says the server has it (or an
    // error refuses it): {commitment, seed}.
    this.pending = null;
  }

  record(table, match, seat, ace) {
    let rec = this.records.find((r) => r.table === table && r.match === match);
    if (!rec) {
      rec = { table, match, seat, ace, deals: {}, seed: null, salt: null, entropy: null };
      this.records.push(rec);
      while (this.records.length > MAX_MATCHES) this.records.shift();
    }
    return rec;
  }

  deal(rec, dealNo) {
    rec.deals[dealNo] ??= { commitments: [], hand: null, sent: null };
    return rec.deals[dealNo];
  }

  /** A `state` frame (a spectator's frames hold no hand: nothing to check). `sentSeed(c)`:
   *  the client seed this page gave for commitment `c`, or null. */
  observe(msg, sentSeed) {
    const { table, view } = msg;
    const info = table?.fairness;
    if (!info || !view || view.watching || typeof view.seat !== "number") return;
    const match = table.match_no ?? 0;
    const rec = this.record(table.id, match, view.seat, view.rules.removed_ace);
    let changed = false;
    const publish = (deal, value) => {
      if (value && !deal.commitments.includes(value)) {
        deal.commitments.push(value);
        changed = true;
      }
    };
    (info.commitments || []).forEach((c, i) => publish(this.deal(rec, i + 1), c));
    const here = this.deal(rec, view.deal_no);
    if (!here.hand) {
      // The first frame of the deal: our hand plus what we had played is what we were dealt.
      const played = view.moves.filter((m) => m.seat === view.seat).flatMap((m) => m.cards || []);
      here.hand = [...view.hand, ...played].sort();
      changed = true;
    }
    const next = info.next;
    if (next) {
      const upcoming = this.deal(this.record(table.id, next.match_no, view.seat, view.rules.removed_ace), next.deal_no);
      publish(upcoming, next.commitment);
      const seed = sentSeed(next.commitment);
      if (seed && next.received?.[view.seat] && upcoming.sent !== seed) {
        if (this.pending?.commitment === next.commitment && this.pending.seed === seed) {
          upcoming.sent = seed;
          changed = true;
        }
      } else if (seed) {
        this.pending = { commitment: next.commitment, seed };
      }
    }
    if (info.seed !== null && info.seed !== undefined && rec.seed === null) {
      rec.seed = exactText(info.seed);
      rec.salt = info.salt;
      rec.entropy = info.entropy || [];
      changed = true;
    }
    if (changed) this.save();
  }

  /** An `error` frame: a refused client seed is not held against the server. */
  onError(msg) {
    if (REFUSALS.has(msg.code)) this.pending = null;
  }

  save() {
    try {
      localStorage.setItem(KEY, JSON.stringify(this.records));
    } catch {
      // Storage full or off: the check of this match is simply not available later.
    }
  }
}

/**
 * Check a match's record: per deal `{deal, failed: [check, ...]}` (empty when it holds),
 * or `failed: ["unseen"]` for a deal this browser never saw dealt. Null until revealed.
 */
export async function verifyRecord(rec) {
  if (!rec || rec.seed === null || rec.salt === null) return null;
  const numbers = Object.keys(rec.deals).map(Number).sort((a, b) => a - b);
  const out = [];
  for (const dealNo of numbers) {
    const deal = rec.deals[dealNo];
    const failed = [];
    const mixed = rec.entropy?.[dealNo - 1] || [];
    if (!deal.hand) {
      // Published (the next match's first deal, say) but never dealt here.
      if (dealNo > (rec.entropy?.length ?? 0)) continue;
      out.push({ deal: dealNo, failed: ["unseen"] });
      continue;
    }
    if (deal.commitments.length > 1) failed.push("commitment_changed");
    const expected = await sha256Hex(`paodekuai-deal/v1/${rec.salt}/${rec.seed}/${dealNo}`);
    if (!deal.commitments.length || deal.commitments.some((c) => c !== expected)) failed.push("commitment_mismatch");
    const hands = await dealHands(rec.ace, rec.seed, dealNo, mixed);
    if (hands[rec.seat].join() !== [...deal.hand].sort().join()) failed.push("hand_mismatch");
    if (deal.sent && (mixed[rec.seat] || "") !== deal.sent) failed.push("entropy_ignored");
    out.push({ deal: dealNo, failed });
  }
  return out;
}

/** The check's section: a heading, a line per deal, and what it all means. */
export function verificationSection(results) {
  // A deal this browser never saw dealt is neither verified nor failed.
  const kind = (failed) => (!failed.length ? "ok" : failed[0] === "unseen" ? "unseen" : "bad");
  const marks = { ok: "✓", bad: "✗", unseen: "–" };
  const rows = results.map(({ deal, failed }) =>
    h(
      "li",
      { class: `verify-row ${kind(failed)}`, "data-deal": String(deal), "data-failed": failed.join(" ") },
      h("span", { class: "verify-mark", "aria-hidden": "true", text: marks[kind(failed)] }),
      h("span", {
        text: failed.length
          ? `${t("verify.deal", { n: deal })}: ${failed.map((f) => t(`verify.${f}`)).join("; ")}`
          : `${t("verify.deal", { n: deal })}: ${t("verify.ok")}`,
      }),
    ),
  );
  const bad = results.some((r) => r.failed.some((f) => f !== "unseen"));
  return h(
    "section",
    { class: "verify", "aria-labelledby": "verify-title" },
    h("h3", { id: "verify-title", text: t("verify.title") }),
    h("ol", { class: "verify-list" }, rows),
    h("p", { class: `note verify-summary ${bad ? "bad" : "ok"}`, role: "status", text: bad ? t("verify.summaryBad") : t("verify.summaryOk") }),
  );
}

/** Check the match `match` of `table` (if this browser recorded it) and show it at the
 *  end of `el`, in place of what an earlier check put there. */
export async function showVerification(el, table, match) {
  const results = await verifyRecord(matchRecord(table, match));
  if (!results || !results.length || !el.isConnected) return;
  el.querySelector(":scope > .verify")?.remove();
  el.append(verificationSection(results));
}
