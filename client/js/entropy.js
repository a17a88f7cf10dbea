// Players' entropy (docs/protocol.md, "Provably fair shuffles"): once a deal is over the
// server publishes its commitment to the next one (`table.fairness.next`); this seat answers
// it with a fresh 128-bit client seed from the browser's secure random source. The server
// mixes every seat's seed into the shuffle, so it cannot choose the cards, having committed
// to its own seed before it saw ours.  A table's first deal has no deal before it: the table
// is opened with `sends_seeds`, and the seed answering the create answer's commitment goes
// right after the join (`first`), so the first state already shows a deal it helped shuffle.

// A lost frame (a reconnect between deals) is answered again, never more than this often.
const MAX_SENDS = 3;

/** 32 lowercase hex digits from crypto.getRandomValues. */
export function clientSeed() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class Entropy {
  /** send(msg) -> bool: hand a message to the seat's socket (false: not sent). */
  constructor(send) {
    this.send = send;
    // commitment -> {seed, sends}: the seed given for each deal, kept for the game record.
    this.given = new Map();
    // The create answer's commitment to the table's first deal, until the first state shows it dealt.
    this.firstDeal = null;
  }

  /** A table we opened: its first deal waits for our seed, answering `commitment`. */
  expectFirst(commitment) {
    this.firstDeal = commitment || null;
  }

  /** The messages to send right after a join: the first deal's seed while it is not dealt. */
  afterJoin() {
    const commitment = this.firstDeal;
    if (!commitment) return [];
    const entry = this.entry(commitment);
    if (entry.sends >= MAX_SENDS) return [];
    entry.sends += 1;
    return [{ type: "entropy", commitment, seed: entry.seed }];
  }

  /** The seed kept for `commitment` (a fresh one for a new deal). */
  entry(commitment) {
    let entry = this.given.get(commitment);
    if (!entry) {
      // Only the latest deal matters: older seeds were used (or refused) already.
      this.given.clear();
      entry = { seed: clientSeed(), sends: 0 };
      this.given.set(commitment, entry);
    }
    return entry;
  }

  /** Every `state` frame: answer the upcoming deal's commitment until the server has our seed. */
  onState(msg) {
    // Any state comes once the first deal is dealt: a rejoin must not answer it again.
    this.firstDeal = null;
    const next = msg.table?.fairness?.next;
    const seat = msg.view?.seat;
    if (!next || typeof seat !== "number" || next.received?.[seat]) return;
    const entry = this.entry(next.commitment);
    if (entry.sends >= MAX_SENDS) return;
    if (this.send({ type: "entropy", commitment: next.commitment, seed: entry.seed })) entry.sends += 1;
  }

  /** The `entropy` messages this seat has given for the upcoming deal (for a saved record). */
  sent() {
    return [...this.given].map(([commitment, { seed }]) => ({ type: "entropy", commitment, seed }));
  }
}
