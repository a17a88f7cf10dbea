// Smart select: a tap on one card selects a whole play that contains it, chosen from the
// plays the server lists for our turn (`view.legal`, each a rank string such as "55539",
// and `view.hints`, concrete cards, the most sensible first).  Nothing here knows a rule:
// a play is offered only because the server listed it.  Following, the smallest listed
// play first (fewest cards, then the server's order: the lowest); leading, the server's
// hints first.  Tapping the same card again moves on to the next such play, and after the
// last one the selection is empty again.

import { rankString } from "./cards.js";

/**
 * Concrete cards for the listed play `ranks` that include `code`: `code` first in its rank,
 * then `mustInclude` (the card the server says the play must hold), then the hand's order.
 * Null when the hand cannot make it with `code` (it always can for a listed play).
 */
function cardsFor(ranks, code, hand, mustInclude) {
  const need = {};
  for (const r of ranks) need[r] = (need[r] || 0) + 1;
  if (!need[code[0]]) return null;
  const first = [code, ...(mustInclude && mustInclude !== code ? [mustInclude] : [])];
  const picked = [];
  for (const c of [...first, ...hand]) {
    if (picked.includes(c) || !hand.includes(c) || !need[c[0]]) continue;
    need[c[0]] -= 1;
    picked.push(c);
  }
  return Object.values(need).every((n) => n === 0) ? picked : null;
}

/** The plays containing `code`, in the order a tap cycles through them. */
export function playsWith(view, code) {
  if (!view || view.result || view.turn !== view.seat || !view.hand.includes(code)) return [];
  const listed = view.legal
    .map((ranks, i) => ({ ranks, i }))
    .filter((p) => p.ranks.includes(code[0]))
    .sort((a, b) => a.ranks.length - b.ranks.length || a.i - b.i)
    .map((p) => cardsFor(p.ranks, code, view.hand, view.must_include))
    .filter(Boolean);
  const hinted = view.table ? [] : (view.hints || []).filter((cards) => cards.includes(code));
  const seen = new Set();
  const plays = [];
  for (const cards of [...hinted, ...listed]) {
    const key = rankString(cards);
    // The server lists what it would accept: a hint it did not list is not offered.
    if (seen.has(key) || !view.legal.includes(key)) continue;
    seen.add(key);
    plays.push(cards);
  }
  return plays;
}

const same = (a, b) => a.length === b.length && a.every((c) => b.includes(c));

/** Remembers the play a tap chose, so that the next tap on the same card moves on. */
export class SmartSelect {
  constructor() {
    this.anchor = null; // the card the cycle started from
    this.index = -1; // which of its plays is selected
    this.pick = []; // that play's cards
    this.version = -1;
  }

  forget() {
    this.anchor = null;
    this.index = -1;
    this.pick = [];
  }

  /**
   * What a tap on `code` selects, with `selected` the selection now and `version` the
   * state's: the cards to select (possibly none), or null for a plain toggle of the card
   * (not our turn, no listed play has it, or the player is building a selection by hand).
   */
  tap(view, version, code, selected) {
    if (version !== this.version) {
      this.forget();
      this.version = version;
    }
    const ours = selected.length === 0 || (this.pick.length > 0 && same(selected, this.pick));
    if (!ours) return null;
    if (this.anchor === code && this.pick.length) {
      const plays = playsWith(view, code);
      this.index += 1;
      if (this.index >= plays.length) {
        this.forget();
        return [];
      }
      this.pick = plays[this.index];
      return this.pick;
    }
    // A tap on another card of the chosen play takes it out: from here on, by hand.
    if (selected.includes(code)) return null;
    const plays = playsWith(view, code);
    if (!plays.length) return null;
    this.anchor = code;
    this.index = 0;
    this.pick = plays[0];
    return this.pick;
  }
}
