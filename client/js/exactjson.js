// JSON.parse for the server's frames that keeps the exact digits of integers a JavaScript
// number cannot hold. The only one the server sends is a finished match's revealed seed
// (`table.fairness.seed`, 63 bits: docs/protocol.md); verify.js needs its exact value to
// check the deals, and everything else reads the frame as before.

// The last few such integers seen: their value as parsed -> the digits the server wrote.
const MAX_EXACT = 32;
const exact = new Map();

/** JSON.parse(text), noting the source text of every unsafe integer in it. */
export function parseFrame(text) {
  // Only a frame with a long digit run can hold one: the others parse as they always did.
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return JSON.parse(text, (key, value, context) => {
    if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value) && context?.source) {
      exact.delete(value);
      exact.set(value, context.source);
      if (exact.size > MAX_EXACT) exact.delete(exact.keys().next().value);
    }
    return value;
  });
}

/** The decimal text the server wrote for the integer that parsed as `value`, or null. */
export function exactText(value) {
  if (typeof value === "string") return /^\d+$/.test(value) ? value : null;
  if (Number.isSafeInteger(value)) return String(value);
  return exact.get(value) ?? null;
}
