// Player names.  The server decides (server/rooms/names.py) and alone knows every rule
// (invisible characters, combining marks, names that look like a bot's by confusable
// skeleton).  The client checks only what it can check exactly as the server does, so that
// a name it refuses is one the server refuses too (tests/client/test_constants.py holds it
// to that); anything else is sent, and the server's refusal is shown under the field.

export const MAX_NAME_CHARS = 24;
const MARKUP = /[<>&"'`]/;
// Control, format (invisible direction marks), private-use and unassigned characters:
// every one is refused by the server as a control or invisible character.
const INVISIBLE = /\p{C}/u;
// The server makes each run of spaces one plain space (its `_SPACES`).
const SPACES = /[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+/g;

/** The name as the server will store it, or null with `why` set when it would refuse it. */
export function checkName(raw) {
  const name = String(raw).normalize("NFC").trim().replace(SPACES, " ");
  if (!name) return { name: null, why: "empty" };
  if ([...name].length > MAX_NAME_CHARS) return { name: null, why: "long" };
  if (MARKUP.test(name)) return { name: null, why: "markup" };
  if (INVISIBLE.test(name)) return { name: null, why: "invisible" };
  return { name, why: null };
}

/** Whether `name` is the server's placeholder for a seat nobody has named. */
export function isPlaceholder(name, seat) {
  return !name || name === "You" || name === `Player ${seat + 1}`;
}
