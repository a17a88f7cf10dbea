// Playing with people: the player's identity, quick match, room codes, the open tables
// (their live list: open_tables.js) and the invite QR.  Everything here talks to the server over HTTP (docs/protocol.md,
// "Players and the lobby"); a seat it finds is handed to the table as an invite link
// (`#table=...&token=...`), which main.js follows like any other.

import { qrcode } from "../vendor/qrcode-generator/qrcode.mjs";
import { app, reasonText } from "./app.js";
import { createTable } from "./net.js";
import { openTables } from "./open_tables.js";
import { t } from "./i18n.js";

const PLAYER_KEY = "pdk.player";
const MATCH_KEY = "pdk.match";
const CODES_KEY = "pdk.codes";
// Must be one of the server's (server/players/identity.py COLOURS).
export const COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7a5195", "#555555"];
const POLL_MS = 1000;

const $ = (id) => document.getElementById(id);
const els = {};
let player = null; // {id, name, colour}
let openList = null; // the open tables (open_tables.js), made by bind()
let polling = null;

function read(key) {
  try {
    return JSON.parse(localStorage.getItem(key));
  } catch {
    return null;
  }
}
const write = (key, value) => localStorage.setItem(key, JSON.stringify(value));

class LobbyError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

async function api(method, path, body, { auth = true } = {}) {
  const headers = {};
  const credential = read(PLAYER_KEY)?.credential;
  if (auth && credential) headers.authorization = `Bearer ${credential}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new LobbyError("network", String(err));
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new LobbyError(data.error?.code || `http_${res.status}`, data.error?.message || res.statusText);
  return data;
}

/** The player, made on first use (the credential stays in this browser). */
async function ensurePlayer() {
  const saved = read(PLAYER_KEY);
  if (saved?.credential) {
    try {
      player = (await api("GET", "/api/players/me")).player;
      return player;
    } catch (err) {
      if (err.code !== "bad_credential") throw err;
    }
  }
  const made = await api("POST", "/api/players", undefined, { auth: false });
  write(PLAYER_KEY, { credential: made.credential });
  player = made.player;
  return player;
}

function go(table, token, seat) {
  els.sheet.close();
  // The seat, for a bot's seat taken at the next deal: the deal is watched from it meanwhile.
  const at = Number.isInteger(seat) ? `&seat=${seat}` : "";
  location.hash = `#table=${encodeURIComponent(table)}&token=${encodeURIComponent(token)}${at}`;
}

function remember(table, code) {
  const codes = read(CODES_KEY) || {};
  codes[table] = code;
  // A few recent tables are enough to show the code of the one we are at.
  write(CODES_KEY, Object.fromEntries(Object.entries(codes).slice(-20)));
}

function showProfile() {
  if (!player) return;
  els.avatar.style.background = player.colour;
  if (document.activeElement !== els.name) els.name.value = player.name;
  for (const b of els.colours.children) b.setAttribute("aria-checked", String(b.dataset.colour === player.colour));
}

async function saveProfile(change) {
  els.profileWhy.textContent = "";
  try {
    player = (await api("PATCH", "/api/players/me", change)).player;
  } catch (err) {
    els.profileWhy.textContent = reasonText(err.code, err.message);
  }
  showProfile();
}

// ------------------------------------------------------------ quick match

function matchStatus(text) {
  els.quickStatus.textContent = text;
  const looking = Boolean(polling);
  els.quick.hidden = looking;
  els.quickCancel.hidden = !looking;
}

async function pollMatch() {
  const pending = read(MATCH_KEY);
  if (!pending) return stopPolling();
  try {
    const place = await api("GET", "/api/match");
    if (place.status === "seated") {
      stopPolling();
      localStorage.removeItem(MATCH_KEY);
      matchStatus("");
      go(place.table, pending.token, place.seat);
      return;
    }
    if (place.status !== "queued") {
      stopPolling();
      localStorage.removeItem(MATCH_KEY);
      matchStatus(t("lobby.dropped"));
      return;
    }
    matchStatus(t("lobby.looking", { s: Math.floor(place.waited_ms / 1000) }));
  } catch (err) {
    matchStatus(reasonText(err.code, err.message));
  }
}

function startPolling() {
  if (!polling) polling = setInterval(pollMatch, POLL_MS);
  pollMatch();
}

function stopPolling() {
  clearInterval(polling);
  polling = null;
  matchStatus(els.quickStatus.textContent);
}

async function quickMatch() {
  els.quickStatus.textContent = "";
  try {
    await ensurePlayer();
    const body = { rules: app.settings.rules, deals: app.settings.deals };
    let joined;
    try {
      joined = await api("POST", "/api/match", body);
    } catch (err) {
      if (err.code !== "already_matched") throw err;
      // Seated at an earlier quick-match table (or queued elsewhere): leave it first.
      await api("DELETE", "/api/match");
      joined = await api("POST", "/api/match", body);
    }
    write(MATCH_KEY, { token: joined.token });
    if (joined.status === "seated") {
      localStorage.removeItem(MATCH_KEY);
      go(joined.table, joined.token, joined.seat);
      return;
    }
    startPolling();
  } catch (err) {
    matchStatus(reasonText(err.code, err.message));
  }
}

async function stopLooking() {
  stopPolling();
  localStorage.removeItem(MATCH_KEY);
  matchStatus("");
  await api("DELETE", "/api/match").catch(() => {});
}

// ------------------------------------------------------------ codes and open tables

async function joinCode(code) {
  els.codeWhy.textContent = "";
  try {
    const credential = read(PLAYER_KEY)?.credential;
    const seat = await api("POST", `/api/codes/${encodeURIComponent(code)}/join`, undefined, { auth: Boolean(credential) });
    remember(seat.table, code.toUpperCase());
    go(seat.table, seat.token);
  } catch (err) {
    els.codeWhy.textContent = reasonText(err.code, err.message);
  }
}

async function openForPeople() {
  els.codeWhy.textContent = "";
  try {
    const settings = { ...app.settings, humans: 3, bots: [] };
    const made = await createTable(settings, player?.name || app.settings.name || null);
    const host = made.seats[0];
    await api("POST", "/api/lobby/open", { code: made.code, token: host.token }, { auth: false });
    remember(made.table, made.code);
    go(made.table, host.token);
  } catch (err) {
    els.codeWhy.textContent = reasonText(err.code, err.message);
  }
}

function showInvite() {
  const table = app.session?.table;
  const code = app.session?.code || (read(CODES_KEY) || {})[table];
  els.invite.hidden = !code || app.session?.watch;
  if (els.invite.hidden) return;
  els.tableCode.textContent = code;
  const qr = qrcode(0, "M");
  qr.addData(`${location.origin}${location.pathname}#code=${code}`);
  qr.make();
  els.qr.innerHTML = qr.createSvgTag({ cellSize: 4, margin: 2, scalable: true, alt: t("lobby.qr", { code }) });
  // Only the host (seat 0) may list the table.
  els.listMine.hidden = app.session?.seat !== undefined && app.session.seat !== 0;
}

async function listMine() {
  els.codeWhy.textContent = "";
  try {
    const code = els.tableCode.textContent;
    await api("POST", "/api/lobby/open", { code, token: app.session.token }, { auth: false });
    els.listMine.hidden = true;
  } catch (err) {
    els.codeWhy.textContent = reasonText(err.code, err.message);
  }
}

// ------------------------------------------------------------ ratings

const PRESETS = ["classic", "sixteen", "kawu"];
const RATING_POLLS = 10;
// The rating change last shown per table ("table/match"), so a redraw shows it again
// and the next match's result waits for its own.
const shownChange = new Map();

function ratingLine(r) {
  return t("lobby.rating", { preset: t(`preset.${r.preset}.name`), track: t(`lobby.track.${r.track}`), rating: r.rating, n: r.matches });
}

async function showRatings() {
  if (!player) return;
  const mine = await api("GET", `/api/players/${encodeURIComponent(player.id)}`, undefined, { auth: false });
  const s = mine.stats;
  els.stats.textContent = t("lobby.stats", { n: s.matches, won: s.deals_won, shut: s.shut_outs, bombs: s.bombs, avg: s.average_points });
  els.ratings.replaceChildren(
    ...mine.ratings.map((r) => {
      const li = document.createElement("li");
      li.textContent = ratingLine(r);
      return li;
    }),
  );
  els.noRating.hidden = mine.ratings.length > 0;
  await showBoard();
}

async function showBoard() {
  const preset = els.boardPreset.value;
  const track = els.boardTrack.value;
  const board = await api("GET", `/api/leaderboard?preset=${preset}&track=${track}&limit=20`, undefined, { auth: false });
  els.board.replaceChildren(
    ...board.rows.map((row) => {
      const li = document.createElement("li");
      if (player && row.id === player.id) li.className = "mine";
      const rank = document.createElement("b");
      rank.className = "rank";
      rank.textContent = row.rank;
      const dot = document.createElement("span");
      dot.className = "avatar small";
      dot.style.background = row.colour;
      const name = document.createElement("span");
      name.className = "who";
      name.textContent = row.name;
      const score = document.createElement("small");
      score.textContent = t("lobby.boardRow", { rating: row.rating, n: row.matches });
      li.append(rank, dot, name, score);
      return li;
    }),
  );
  els.boardEmpty.hidden = board.rows.length > 0;
}

function changeText(last) {
  const sign = last.change > 0 ? "+" : "";
  return t("result.rating", { before: last.before, after: last.after, change: `${sign}${last.change}` });
}

/** The player's rating change, first in `container` (a finished match's result), once
 * the server has rated the match (it does so just after; a few polls wait for it). */
export async function showRatingChange(container, table) {
  if (!table || !read(PLAYER_KEY)?.credential) return;
  const line = document.createElement("p");
  line.className = "rating-change";
  line.id = "result-rating";
  line.setAttribute("role", "status");
  const known = shownChange.get(table);
  if (known) {
    line.textContent = changeText(known);
    place(container, line);
    return;
  }
  for (let i = 0; i < RATING_POLLS; i += 1) {
    let me;
    try {
      me = await api("GET", "/api/players/me");
    } catch {
      return;
    }
    const last = me.last;
    if (last && last.table === table) {
      shownChange.set(table, last);
      line.textContent = changeText(last);
      place(container, line);
      return;
    }
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

/** The rating's line first in `container`, in place of one put there before (the
 * result is drawn again while a poll for it is still out). */
function place(container, line) {
  container.querySelector("#result-rating")?.remove();
  container.prepend(line);
}

// ------------------------------------------------------------ the sheet

async function openSheet() {
  els.sheet.showModal();
  showInvite();
  openList.watch();
  try {
    await ensurePlayer();
    showProfile();
    await showRatings();
  } catch (err) {
    els.profileWhy.textContent = reasonText(err.code, err.message);
  }
}

function bind() {
  for (const id of ["sheet", "avatar", "name", "colours", "profileWhy", "quick", "quickStatus", "quickCancel", "codeForm", "code", "codeWhy", "open", "openEmpty", "newOpen", "invite", "tableCode", "qr", "listMine", "recovery", "recoveryLink", "delete", "stats", "ratings", "noRating", "boardPreset", "boardTrack", "board", "boardEmpty"]) {
    els[id] = $(`lobby-${id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  }
  els.button = $("btn-people");
  for (const colour of COLOURS) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "swatch";
    b.role = "radio";
    b.style.background = colour;
    b.dataset.colour = colour;
    b.setAttribute("aria-label", colour);
    b.addEventListener("click", () => saveProfile({ colour }));
    els.colours.append(b);
  }
  els.name.addEventListener("change", () => saveProfile({ name: els.name.value }));
  for (const preset of PRESETS) els.boardPreset.append(new Option(t(`preset.${preset}.name`), preset));
  for (const track of ["people", "bots"]) els.boardTrack.append(new Option(t(`lobby.track.${track}`), track));
  for (const select of [els.boardPreset, els.boardTrack]) {
    select.addEventListener("change", () => showBoard().catch((err) => (els.profileWhy.textContent = reasonText(err.code, err.message))));
  }
  els.button.addEventListener("click", openSheet);
  els.sheet.addEventListener("close", () => openList.unwatch());
  els.quick.addEventListener("click", quickMatch);
  els.quickCancel.addEventListener("click", stopLooking);
  els.codeForm.addEventListener("submit", (e) => {
    e.preventDefault();
    joinCode(els.code.value.trim());
  });
  els.newOpen.addEventListener("click", openForPeople);
  openList = openTables(els.open, els.openEmpty, joinCode);
  els.listMine.addEventListener("click", listMine);
  els.recovery.addEventListener("click", async () => {
    try {
      const { link } = await api("POST", "/api/players/me/recovery");
      els.recoveryLink.textContent = t("lobby.moveLink", { link: `${location.origin}${location.pathname}${link}` });
    } catch (err) {
      els.recoveryLink.textContent = reasonText(err.code, err.message);
    }
  });
  els.delete.addEventListener("click", async () => {
    if (!confirm(t("lobby.deleteConfirm"))) return;
    await api("DELETE", "/api/players/me").catch(() => {});
    localStorage.removeItem(PLAYER_KEY);
    player = null;
    els.sheet.close();
  });
}

/** Bind the lobby, and turn a `#code=...` or `#recover=...` address into what it leads
 * to before the table starts: a code becomes its seat's invite link. */
export async function initLobby() {
  bind();
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const recover = params.get("recover");
  const code = params.get("code");
  if (recover) {
    history.replaceState(null, "", location.pathname + location.search);
    try {
      const moved = await api("POST", "/api/players/recover", { code: recover }, { auth: false });
      write(PLAYER_KEY, { credential: moved.credential });
    } catch {
      // A used or expired link: this browser keeps (or later gets) its own identity.
    }
  }
  if (code) {
    try {
      const credential = read(PLAYER_KEY)?.credential;
      const seat = await api("POST", `/api/codes/${encodeURIComponent(code)}/join`, undefined, { auth: Boolean(credential) });
      remember(seat.table, code.toUpperCase());
      history.replaceState(null, "", `${location.pathname}${location.search}#table=${encodeURIComponent(seat.table)}&token=${encodeURIComponent(seat.token)}`);
    } catch {
      history.replaceState(null, "", location.pathname + location.search);
    }
  }
  if (read(MATCH_KEY)) startPolling();
}
