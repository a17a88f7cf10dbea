// The seat's connection, as the page sees it: open a table when we hold no seat, keep the
// seat's socket (net.js's Connection), show online / offline, and send, keeping track of
// the one move in flight.  Frames that arrive go to the handler main.js binds.

import { app, els, reasonText } from "./app.js";
import { t } from "./i18n.js";
import { announce, toast } from "./narrate.js";
import { ApiError, Connection, createTable } from "./net.js";
import { showNeedsServer } from "./pwa.js";
import { HOST_SEAT } from "./seats.js";
import { clearSession, loadSession, saveSession } from "./store.js";

// Bound once by main.js: onMessage(msg) for every frame, redraw() after a change here;
// onLinkDead() when our seat's link no longer works; opened(res) with a table we opened,
// afterJoin() for what each join is followed by.
let hooks = {
  onMessage: () => {},
  redraw: () => {},
  onLinkDead: () => {},
  opened: () => {},
  afterJoin: () => [],
};

export function bindConnection(bound) {
  hooks = { ...hooks, ...bound };
}

/** The links this browser handed out: {seats: {seat: path}, watch: path}. */
export function linksFrom(session) {
  const seats = {};
  for (const inv of session?.invites || []) seats[inv.seat] = inv.invite;
  return { seats, watch: session?.watch_link || null };
}

export async function openNewTable(notice) {
  if (app.conn) app.conn.close();
  app.conn = null;
  app.view = null;
  setNet({ state: "connecting" });
  els.status.textContent = t("status.opening");
  try {
    const res = await createTable(app.settings, app.settings.name || null);
    const [mine, ...others] = res.seats;
    app.session = { table: res.table, token: mine.token, seat: mine.seat, invites: others, code: res.code };
    app.links = linksFrom(app.session);
    saveSession(app.session);
    hooks.opened(res);
    connect();
    if (notice) toast(notice);
  } catch (err) {
    const code = err instanceof ApiError ? err.code : "network";
    setNet({ state: "offline", retryAt: Date.now() + 3000 });
    els.status.textContent = t("status.cannotOpen", { reason: reasonText(code, err.message) });
    setTimeout(() => openNewTable(notice), 3000);
  }
}

export function connect() {
  const { table, token } = app.session;
  app.conn = new Connection({
    table,
    token,
    onMessage,
    onStatus: setNet,
    afterJoin: () => hooks.afterJoin(),
    onFatal: (code) => {
      if (code === 4409) {
        // The seat was opened in newer tabs or devices: reconnecting would push one of them
        // out in turn, so this tab steps aside until the player reloads it.
        setNet({ state: "replaced" });
        toast(t("net.replaced"));
        return;
      }
      // The table or seat is gone (server data reset, or an invite for a finished table).
      if (app.session.watch) {
        // A dead watch link says why and stops; it never opens a table of our own.
        history.replaceState(null, "", location.pathname + location.search);
        app.session = loadSession();
        if (app.session?.table && app.session?.token) connect();
        else openNewTable();
        toast(t("notice.watchGone"));
        return;
      }
      // A friend's seat link (never joined, or since replaced by the host) is said to be
      // dead, with a choice: never a silent new table of their own.  It stays stored, so a
      // reload says it again until they choose.
      if (app.session.invited && app.session.seat !== HOST_SEAT) {
        hooks.onLinkDead(code);
        return;
      }
      clearSession();
      openNewTable(t(code === 4401 ? "notice.badSeat" : "notice.tableGone"));
    },
  });
  app.conn.open();
}

let netTimer = null;
function setNet(status) {
  app.net = status;
  // A stalled socket may still answer the move: only a lost one reports it not confirmed.
  if (status.state !== "online" && status.state !== "stalled" && app.pending) {
    // The socket died before the server answered: say so plainly, the move may be lost.
    app.pending = null;
    toast(t("net.notConfirmed"));
    announce(t("net.notConfirmed"));
  }
  clearInterval(netTimer);
  const draw = () => {
    const { state, retryAt } = app.net;
    els.net.hidden = state === "online";
    els.net.dataset.state = state;
    if (state === "connecting") els.netText.textContent = t("net.connecting");
    else if (state === "replaced") els.netText.textContent = t("net.replacedShort");
    else if (state === "stalled") els.netText.textContent = t("net.stalled");
    else if (state === "offline") {
      const s = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
      els.netText.textContent = s > 0 ? t("net.offlineRetry", { s }) : t("net.connecting");
    }
  };
  draw();
  if (status.state === "offline") netTimer = setInterval(draw, 500);
  els.app.classList.toggle("offline", status.state !== "online");
  showNeedsServer(status.state, Boolean(app.view));
  hooks.redraw();
}

export function send(msg) {
  if (!app.conn || !app.conn.send(msg)) {
    toast(t("net.notSent"));
    return false;
  }
  if (msg.type === "play" || msg.type === "pass") {
    const pending = { version: msg.version, shown: false };
    app.pending = pending;
    // Shown only if the answer is slow, so a quick round trip does not flicker.
    setTimeout(() => {
      if (app.pending !== pending) return;
      pending.shown = true;
      hooks.redraw();
    }, PENDING_AFTER_MS);
  }
  return true;
}

const PENDING_AFTER_MS = 400;

function settle(msg) {
  if (!app.pending) return;
  if (msg.type === "error" || (msg.type === "state" && msg.version > app.pending.version)) app.pending = null;
}

function onMessage(msg) {
  settle(msg);
  hooks.onMessage(msg);
}
