// Auto-pass: when nothing in the hand beats the table (the server says so with
// `view.can_pass`), pass for the player after a short pause, so they still see the play
// they could not beat.  A setting, on by default.  The pass it makes is remembered so the
// table can label it "passed automatically".

export const AUTO_PASS_MS = 900;

export class AutoPass {
  /** `pass(version)` sends a pass made against `version`; true when it went out. */
  constructor({ pass }) {
    this.pass = pass;
    this.timer = null;
    // The one automatic pass we may still be showing: {dealKey, index in view.moves}.
    this.made = null;
  }

  /** After every state: arm the pause when passing is all we can do, else disarm it. */
  consider({ view, version, dealKey, enabled }) {
    this.cancel();
    if (!enabled || !view || view.result || view.turn !== view.seat || !view.can_pass) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.pass(version)) this.made = { dealKey, index: view.moves.length };
    }, AUTO_PASS_MS);
  }

  cancel() {
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** Whether `move` (one of `view.trick`) is the pass made for us. */
  madeIt(view, dealKey, move) {
    if (!this.made || this.made.dealKey !== dealKey || move.kind !== "pass") return false;
    // The trick is the tail of the deal's moves: its first move's index is the difference.
    const index = view.moves.length - view.trick.length + view.trick.indexOf(move);
    return index === this.made.index && move.seat === view.seat;
  }

  /** Whether the automatic pass is among the moves that `view` adds after `before` moves. */
  madeSince(view, dealKey, before) {
    const m = this.made;
    return Boolean(m && m.dealKey === dealKey && m.index >= before && m.index < view.moves.length);
  }
}
