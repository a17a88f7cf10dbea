// Player names.  The server decides (server/rooms/names.py); this mirrors its rules so the
// settings sheet can explain a bad name before sending it.

export const MAX_NAME_CHARS = 24;
const MARKUP = /[<>&"'`]/;
// Control, format (invisible direction marks), private-use and unassigned characters.
const INVISIBLE = /\p{C}/u;

/** The name as the server will store it, or null with `why` set when it would refuse it. */
export function checkName(raw) {
  const name = String(raw).normalize("NFC").trim();
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
