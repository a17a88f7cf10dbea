// What survives a reload: the seat we hold (table id + seat token) and the player's settings.

const SESSION_KEY = "pdk.session";
const SETTINGS_KEY = "pdk.settings";

export const DEFAULT_SETTINGS = Object.freeze({
  rules: "classic",
  deals: 1,
  humans: 1,
  bots: ["normal", "normal"],
  botSpeed: 800,
  turnSeconds: 30, // tables with two or more people: seconds per turn, 0 for no clock
  lang: null, // null: follow the browser
  sound: true,
  fourColour: false,
  sort: "rank",
  counter: true,
  autoPass: true,
  smartSelect: true, // a tap selects a whole listed play (smartselect.js)
  name: "", // empty: the server's placeholder ("Player n" in our language)
  cardSize: "normal", // "normal" | "large" (display.js)
  highContrast: false,
  callouts: "voice", // "voice" (spoken where the browser can) | "sounds" (callouts.js)
  tourSeen: false, // the first-game tour was shown (tour.js)
});

function read(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode or a full quota: the game still works, it just won't survive a reload.
  }
}

export function loadSettings() {
  const saved = read(SETTINGS_KEY) || {};
  const s = { ...DEFAULT_SETTINGS, ...saved };
  if (!Array.isArray(s.bots) || s.bots.length !== 2) s.bots = [...DEFAULT_SETTINGS.bots];
  if (![0, 15, 30, 60].includes(s.turnSeconds)) s.turnSeconds = DEFAULT_SETTINGS.turnSeconds;
  return s;
}

export const saveSettings = (s) => write(SETTINGS_KEY, s);

/** { table, token, seat?, invites?: [{seat, invite}] } or null. */
export const loadSession = () => read(SESSION_KEY);
export const saveSession = (s) => write(SESSION_KEY, s);
export const clearSession = () => write(SESSION_KEY, null);

/** A `#table=...&token=...` invite or a `#table=...&watch=...` watch link, or null. */
export function sessionFromHash(hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const table = params.get("table");
  const token = params.get("token");
  const watch = params.get("watch");
  if (table && watch) return { table, token: watch, watch: true };
  // `seat`: where a quick-match token sits (it may get `watch` frames until the deal ends).
  const seat = /^[0-2]$/.test(params.get("seat") || "") ? Number(params.get("seat")) : undefined;
  return table && token ? { table, token, ...(seat === undefined ? {} : { seat }) } : null;
}
