// Per-seat deltas (docs/protocol.md, "Deltas"): after one whole `state` (or `watch`) frame,
// the server sends only what changed in this socket's picture, {t: table, v: view}, as ops
// of a generic diff on each (`o` the view's, `t` the table's), and the CRC-32 of the
// picture it should now be.  This file applies
// them, exactly as server/deltas.py's Mirror does; it knows nothing of the game.

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

/**
 * A socket's copy of its picture.  take(frame) answers a `state`/`watch`/`delta` frame
 * with the whole frame it stands for ({type, version, table, view, events}), with the
 * reason to resync ("gap", "patch", "digest"), or null while waiting for the whole frame
 * a resync brings (one resync asked, not one per frame).
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
      this.kind = frame.type;
      // A copy: the page is handed this frame and may change what it keeps.
      this.picture = structuredClone({ t: frame.table, v: frame.view });
      this.version = frame.version;
      this.lost = false;
      return frame;
    }
    if (this.lost) return null;
    const reason = this.patched(frame);
    if (reason) {
      this.picture = null;
      this.lost = true;
      return reason;
    }
    // A copy: the page may keep or change what it is handed without touching the mirror.
    const { t, v } = structuredClone(this.picture);
    return { type: this.kind, version: frame.v, table: t, view: v, events: wholeEvents(frame.e || [], v) };
  }

  patched(frame) {
    if (this.picture === null || (frame.f ?? frame.v - 1) !== this.version) return "gap";
    let picture;
    try {
      picture = { t: patch(this.picture.t, frame.t || []), v: patch(this.picture.v, frame.o) };
      wholeEvents(frame.e || [], picture.v);
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

/** A delta frame's events with each move's index replaced by the event that move of
 * the view tells of, as a `state` frame carries it (server/deltas.py whole_events). */
export function wholeEvents(events, view) {
  if (!Array.isArray(events)) throw new PatchError("the events are a list");
  return events.map((ev) => {
    if (!Number.isInteger(ev)) return ev;
    const move = Array.isArray(view.moves) ? view.moves[ev] : undefined;
    if (ev < 0 || move === null || typeof move !== "object") throw new PatchError(`no move ${ev} to tell of`);
    if (move.kind === "pass") return { type: "passed", seat: move.seat };
    return { type: "played", seat: move.seat, cards: structuredClone(move.cards), kind: move.kind, top: move.top };
  });
}
