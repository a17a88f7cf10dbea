// Per-seat deltas (docs/protocol.md, "Deltas"): after one whole picture (a `p` frame), the
// server sends only what changed in this socket's picture, {t: table, v: the view's wire
// form}, as ops on each (`o` the view's, `t` the table's), and the CRC-32 of the picture
// it should now be.  This file applies them and expands the wire form into the view a
// `state` frame carries, exactly as server/deltas/ (Mirror, wire.expand) does; it knows
// nothing of the game.

/** Why a patch does not fit the picture: the client asks for a resync. */
export class PatchError extends Error {}

const unescape = (part) => (part.includes("~") ? part.replaceAll("~1", "/").replaceAll("~0", "~") : part);

function parts(path) {
  if (path === null) return [];
  if (typeof path !== "string") throw new PatchError(`a path is a string or null, not ${path}`);
  return path.split("/");
}

function index(list, part, extra = 0) {
  if (!/^[0-9]+$/.test(part) || Number(part) >= list.length + extra) throw new PatchError(`no item ${part}`);
  return Number(part);
}

function child(node, part) {
  if (Array.isArray(node)) return node[index(node, part)];
  if (node !== null && typeof node === "object") {
    const key = unescape(part);
    if (!Object.hasOwn(node, key)) throw new PatchError(`no key ${key}`);
    return node[key];
  }
  throw new PatchError(`cannot go into ${typeof node} at ${part}`);
}

function at(root, path) {
  let node = root.value;
  for (const part of parts(path)) node = child(node, part);
  return node;
}

const isCount = (n) => Number.isInteger(n) && n >= 0;

function setAt(root, path, value) {
  const steps = parts(path);
  if (steps.length === 0) {
    root.value = structuredClone(value);
    return;
  }
  const parent = at(root, steps.length > 1 ? steps.slice(0, -1).join("/") : null);
  const last = steps[steps.length - 1];
  if (Array.isArray(parent)) {
    parent[index(parent, last, 1)] = structuredClone(value);
  } else if (parent !== null && typeof parent === "object") {
    parent[unescape(last)] = structuredClone(value);
  } else {
    throw new PatchError(`${path} goes through ${typeof parent}`);
  }
}

function applyOp(root, op) {
  if (!Array.isArray(op) || ![1, 2, 4].includes(op.length)) throw new PatchError("an op is a list of 1, 2 or 4 items");
  if (op.length === 4) {
    const [path, start, count, items] = op;
    const target = at(root, path);
    if (!Array.isArray(target)) throw new PatchError("a splice is made on a list");
    if (!isCount(start) || !isCount(count) || start + count > target.length) throw new PatchError("bad splice");
    if (!Array.isArray(items)) throw new PatchError("a splice inserts a list");
    target.splice(start, count, ...structuredClone(items));
    return;
  }
  if (op.length === 2 && Array.isArray(op[0])) {
    // One value set at several paths (a move in the trick, the deal's moves, the top).
    if (op[0].length === 0) throw new PatchError("a set names at least one path");
    for (const path of op[0]) {
      if (path === null) throw new PatchError("the picture itself is set alone");
      setAt(root, path, op[1]);
    }
    return;
  }
  if (op.length === 2) {
    setAt(root, op[0], op[1]);
    return;
  }
  const path = parts(op[0]);
  if (path.length === 0) throw new PatchError("the picture itself cannot be removed");
  const parent = at(root, path.length > 1 ? path.slice(0, -1).join("/") : null);
  const key = unescape(path[path.length - 1]);
  if (Array.isArray(parent) || parent === null || typeof parent !== "object" || !Object.hasOwn(parent, key)) {
    throw new PatchError(`nothing to remove at ${op[0]}`);
  }
  delete parent[key];
}

/** `picture` with `ops` applied: a new value, `picture` left as it was. */
export function patch(picture, ops) {
  if (!Array.isArray(ops)) throw new PatchError("the ops are a list");
  const root = { value: structuredClone(picture) };
  for (const op of ops) applyOp(root, op);
  return root.value;
}

// Python sorts keys by code point; JavaScript's default sort by UTF-16 unit, which differs
// only past U+FFFF: compare code points so both sides agree on every key.
function byCodePoint(a, b) {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}
const asciiOnly = (keys) => keys.every((k) => /^[\x00-\x7f]*$/.test(k));

/** The picture's canonical JSON: keys sorted, no spaces, JSON.stringify's string escapes
 * (msgspec's too); an integer a number cannot hold exactly is null (server/deltas.py). */
export function canonical(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  switch (typeof value) {
    case "object": {
      const keys = Object.keys(value);
      keys.sort(asciiOnly(keys) ? undefined : byCodePoint);
      return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
    }
    case "number":
      return Number.isInteger(value) && !Number.isSafeInteger(value) ? "null" : JSON.stringify(value);
    default:
      return JSON.stringify(value);
  }
}

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();
const utf8 = new TextEncoder();

/** CRC-32 (zlib's) of the picture's canonical JSON in UTF-8, as 8 lowercase hex digits. */
export function digest(picture) {
  const bytes = utf8.encode(canonical(picture));
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return ((crc ^ -1) >>> 0).toString(16).padStart(8, "0");
}

// The wire form of a view (server/deltas/wire.py): its fields by index; a spectator's
// is the first 16.
const PUBLIC_FIELDS = ["rules", "results", "deals", "deal_no", "moves", "trick", "table", "leader", "turn",
  "counts", "last_card", "bomb_points", "totals", "result", "match_over", "winners"];
const MOVES = 4;
// The rules and each deal's result: lists of their fields' values, in this order.
const RULES_FIELDS = ["preset", "removed_ace", "first_play_three_spades", "later_leader", "split_bombs", "bomb_payment"];
const RESULT_FIELDS = ["deal_no", "winner", "cards_left", "shut_out", "bomb_points", "card_points", "deal_totals", "match_totals"];
const PASS_CODES = [null, "deal_over", "not_your_turn", "leader_may_not_pass", "must_beat"];
const RANKS = "3456789TJQKA2";
// An event that tells of no move: [type, ...its fields in this order].
export const EVENT_FIELDS = {
  played: ["seat", "cards", "kind", "top"],
  passed: ["seat"],
  trick_cleared: ["leader"],
  last_card: ["seat"],
  bomb_paid: ["seat", "points"],
  deal_started: ["deal_no", "leader"],
  deal_ended: ["winner", "totals"],
  match_ended: ["winners", "totals"],
};

/** The wire form's tables, for the tests to hold against server/deltas/wire.py. */
export const WIRE = { PUBLIC_FIELDS, RULES_FIELDS, RESULT_FIELDS, EVENT_FIELDS, PASS_CODES, RANKS };

const isIndex = (n, size) => Number.isInteger(n) && n >= 0 && n < size;

function fields(names, values) {
  if (!Array.isArray(values) || values.length !== names.length) throw new PatchError(`not the fields ${names}`);
  return Object.fromEntries(names.map((name, i) => [name, values[i]]));
}

function codes(text) {
  if (typeof text !== "string" || text.length % 2) throw new PatchError("not a string of card codes");
  const out = [];
  for (let i = 0; i < text.length; i += 2) out.push(text.slice(i, i + 2));
  return out;
}

function listed(text) {
  if (typeof text !== "string") throw new PatchError("not a list joined by commas");
  return text ? text.split(",") : [];
}

function expandMove(move) {
  if (!Array.isArray(move) || (move.length !== 1 && move.length !== 5)) throw new PatchError("not a move");
  if (move.length === 1) return { seat: move[0], cards: [], kind: "pass", top: "", length: 0 };
  return { seat: move[0], cards: codes(move[1]), kind: move[2], top: move[3], length: move[4] };
}

/** A hint's cards: for each rank of `ranks`, the first cards of that rank in `hand`
 * (`must` first), in the hand's order (server/deltas/wire.py pick). */
export function pick(hand, ranks, must) {
  const wanted = new Map();
  for (const r of ranks) wanted.set(r, (wanted.get(r) || 0) + 1);
  const taken = [];
  for (const [rank, count] of wanted) {
    const at = [];
    hand.forEach((card, i) => { if (card[0] === rank) at.push(i); });
    at.sort((a, b) => (hand[a] !== must) - (hand[b] !== must) || a - b);
    if (at.length < count) throw new PatchError(`the hand holds too few ${rank} for ${ranks}`);
    taken.push(...at.slice(0, count));
  }
  return taken.sort((a, b) => a - b).map((i) => hand[i]);
}

/** The view (as a `state`/`watch` frame carries it) a wire form stands for. */
export function expand(wire) {
  const n = PUBLIC_FIELDS.length;
  if (!Array.isArray(wire) || (wire.length !== n && wire.length !== n + 5)) throw new PatchError("not a wire form");
  const w = structuredClone(wire);
  const [rulesAt, resultsAt, deals, dealNo, moves, trick, tableAt, leader, turn, counts, lastCard, bombPoints, totals, resultAt, matchOver, winners] = w;
  if (!Array.isArray(moves) || !isIndex(trick, moves.length + 1)) throw new PatchError("the trick does not start in the moves");
  if (tableAt !== null && tableAt !== -1 && !(isIndex(tableAt, moves.length) && tableAt >= trick)) throw new PatchError("the table is not in the trick");
  if (!Array.isArray(resultsAt)) throw new PatchError("the results are a list");
  const rules = fields(RULES_FIELDS, rulesAt);
  const results = resultsAt.map((r) => fields(RESULT_FIELDS, r));
  if (!(resultAt === null || isIndex(resultAt, results.length))) throw new PatchError("no such result");
  const expanded = moves.map(expandMove);
  let table = tableAt;
  if (table === -1) {
    table = null;
    for (let i = expanded.length - 1; i >= trick; i--) {
      if (expanded[i].kind !== "pass") {
        table = i;
        break;
      }
    }
  }
  const view = {
    rules, deal_no: dealNo, deals, counts, last_card: lastCard, turn, leader,
    table: table === null ? null : structuredClone(expanded[table]),
    trick: structuredClone(expanded.slice(trick)),
    moves: expanded,
    bomb_points: bombPoints, totals,
    result: resultAt === null ? null : structuredClone(results[resultAt]),
    results, match_over: matchOver, winners,
  };
  if (wire.length === n) return view;
  const [seat, handText, aidsAt, counter, revealed] = w.slice(n);
  const hand = codes(handText);
  const aids = Array.isArray(aidsAt) ? aidsAt : ["", null, aidsAt, ""];
  if (aids.length !== 4) throw new PatchError("the aids are legal, must_include, pass and hints");
  const [legal, must, code, hints] = aids;
  if (!isIndex(code, PASS_CODES.length)) throw new PatchError("no such pass code");
  if (!Array.isArray(counter) || counter.length !== RANKS.length) throw new PatchError("one count per rank");
  if (!Array.isArray(revealed)) throw new PatchError("revealed is a list");
  return Object.assign(view, {
    seat, hand, legal: listed(legal), must_include: must, can_pass: code === 0, pass_reason: PASS_CODES[code],
    hints: listed(hints).map((ranks) => pick(hand, ranks, must)),
    counter: Object.fromEntries([...RANKS].map((r, i) => [r, counter[i]])),
    revealed: revealed.map(codes),
  });
}

/**
 * A socket's copy of its picture.  take(frame) answers a `p` (whole picture) or `d` (delta)
 * frame with the whole frame it stands for ({type, version, table, view, events}), with the
 * reason to resync ("gap", "patch", "digest"), or null while waiting for the whole picture
 * a resync brings (one resync asked, not one per frame).  A `state`/`watch` frame is handed
 * on as it is.
 */
export class Mirror {
  constructor() {
    this.picture = null;
    this.version = null;
    this.kind = "state";
    this.lost = false;
  }

  take(frame) {
    if (frame.type === "state" || frame.type === "watch") {
      this.picture = null;
      this.version = frame.version;
      return frame;
    }
    if (frame.type === "p") {
      let whole;
      try {
        whole = this.whole(frame.v, frame.t, frame.w, frame.e || []);
      } catch (err) {
        if (!(err instanceof PatchError)) throw err;
        this.picture = null;
        this.lost = true;
        return "patch";
      }
      this.kind = frame.k;
      whole.type = frame.k;
      this.picture = structuredClone({ t: frame.t, v: frame.w });
      this.version = frame.v;
      this.lost = false;
      return whole;
    }
    if (this.lost) return null;
    const reason = this.patched(frame);
    if (reason) {
      this.picture = null;
      this.lost = true;
      return reason;
    }
    return this.made;
  }

  whole(version, table, wire, events) {
    const view = expand(wire);
    return { type: this.kind, version, table: structuredClone(table), view, events: wholeEvents(events, view) };
  }

  patched(frame) {
    if (this.picture === null || (frame.f ?? frame.v - 1) !== this.version) return "gap";
    let picture;
    try {
      picture = { t: patch(this.picture.t, frame.t || []), v: patch(this.picture.v, frame.o) };
      const events = "e" in frame ? frame.e : appended(this.picture.v, picture.v);
      this.made = this.whole(frame.v, picture.t, picture.v, events);
    } catch (err) {
      if (err instanceof PatchError) return "patch";
      throw err;
    }
    if (digest(picture) !== frame.h) return "digest";
    this.picture = picture;
    this.version = frame.v;
    return null;
  }
}

/** The events a delta implies when it leaves its own out: the moves it appended. */
function appended(before, after) {
  const out = [];
  const from = Array.isArray(before?.[MOVES]) ? before[MOVES].length : 0;
  const to = Array.isArray(after?.[MOVES]) ? after[MOVES].length : 0;
  for (let i = from; i < to; i++) out.push(i);
  return out;
}

/** A delta frame's events with each move's index replaced by the event that move of
 * the view tells of, and each [type, ...fields] made whole, as a `state` frame carries
 * them (server/deltas/wire.py whole_events). */
export function wholeEvents(events, view) {
  if (!Array.isArray(events)) throw new PatchError("the events are a list");
  return events.map((ev) => {
    if (Array.isArray(ev)) {
      const fields = EVENT_FIELDS[ev[0]];
      if (!fields || ev.length !== fields.length + 1) throw new PatchError("no such event");
      return Object.fromEntries([["type", ev[0]], ...fields.map((f, i) => [f, structuredClone(ev[i + 1])])]);
    }
    if (ev !== null && typeof ev === "object") return ev;
    if (!Number.isInteger(ev)) throw new PatchError("no such event");
    const move = Array.isArray(view.moves) ? view.moves[ev] : undefined;
    if (ev < 0 || move === null || typeof move !== "object") throw new PatchError(`no move ${ev} to tell of`);
    if (move.kind === "pass") return { type: "passed", seat: move.seat };
    return { type: "played", seat: move.seat, cards: structuredClone(move.cards), kind: move.kind, top: move.top };
  });
}
