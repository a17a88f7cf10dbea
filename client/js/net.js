// Talking to the server: POST /api/tables to open a table, then one WebSocket per seat
// that rejoins by itself (exponential backoff with jitter) whenever the network drops.
// The socket takes deltas (deltas.js): the page is handed whole frames all the same.

import { Mirror } from "./deltas.js";
import { parseFrame } from "./exactjson.js";

export class ApiError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** Open a table with these settings; answers {table, seats: [{seat, token, invite}], commitment}. */
export async function createTable(settings, playerName) {
  const body = {
    rules: settings.rules,
    deals: settings.deals,
    humans: settings.humans,
    bots: settings.bots.slice(0, 3 - settings.humans),
    bot_speed_ms: settings.botSpeed,
    // Our first seed goes right after the join (entropy.js): the first deal waits for it.
    sends_seeds: true,
  };
  // Alone against bots the server runs no clock; among people the chosen one (0: none).
  if (settings.humans > 1 && settings.turnSeconds !== undefined) body.turn_seconds = settings.turnSeconds;
  if (playerName) body.name = playerName;
  let res;
  try {
    res = await fetch("/api/tables", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError("network", String(err));
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const e = data.error || {};
    throw new ApiError(e.code || `http_${res.status}`, e.message || res.statusText);
  }
  return data;
}

// Close codes after which retrying the same seat is pointless.
export const FATAL_CLOSE = new Set([4400, 4401, 4404, 4409]);

// A silent stall (the TCP connection stays open but nothing arrives) shows only as silence:
// ping often, and give the socket up when a frame we sent has had no answer of any kind
// for STALL_MS.  A socket that has not joined within JOIN_TIMEOUT_MS is given up too.
export const PING_MS = 2000;
export const STALL_MS = 4000;
const JOIN_TIMEOUT_MS = 8000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15000;

export class Connection {
  /**
   * onMessage(msg); onStatus({state: "connecting"|"online"|"stalled"|"offline", retryAt});
   * onFatal(code); afterJoin(): messages sent right after each join (a first deal's
   * client seed).
   */
  constructor({ table, token, onMessage, onStatus, onFatal, deltas = true, afterJoin = () => [] }) {
    Object.assign(this, { table, token, onMessage, onStatus, onFatal, deltas, afterJoin });
    // This socket's picture, rebuilt from deltas (a new one per socket).
    this.mirror = new Mirror();
    // Resyncs asked, by reason: read by the tests through pdk.state().
    this.resyncs = [];
    this.ws = null;
    this.attempt = 0;
    this.retryTimer = null;
    this.pingTimer = null;
    this.joinTimer = null;
    this.closed = false;
    this.joined = false;
    // When the oldest frame still waiting for any answer was sent (null: none is waiting).
    this.waitingSince = null;
    this.retryNow = () => {
      if (!this.closed && !this.ws) this.open();
    };
    this.onVisible = () => {
      if (document.visibilityState === "visible") this.retryNow();
    };
    // The browser knows it lost the network before any ping could tell: give the socket up
    // at once, so the player sees "offline" now rather than after a stall.
    this.goneOffline = () => {
      if (!this.closed && this.ws) this.drop(this.ws);
    };
    window.addEventListener("online", this.retryNow);
    window.addEventListener("offline", this.goneOffline);
    document.addEventListener("visibilitychange", this.onVisible);
  }

  open() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    // The table id in the URL only routes: a proxy in front of several replicas hashes
    // on it, so every socket of a table meets the process that runs it (the join frame
    // still names the table, and the server goes by that).
    const ws = new WebSocket(`${proto}//${location.host}/ws?table=${encodeURIComponent(this.table)}`);
    this.ws = ws;
    this.joined = false;
    this.stalled = false;
    this.waitingSince = null;
    this.mirror = new Mirror();
    this.onStatus({ state: "connecting" });
    this.joinTimer = setTimeout(() => {
      if (this.ws === ws && !this.joined) this.drop(ws);
    }, JOIN_TIMEOUT_MS);
    ws.addEventListener("open", () => {
      ws.send(JSON.stringify({ type: "join", table: this.table, token: this.token, deltas: this.deltas }));
      for (const msg of this.afterJoin()) ws.send(JSON.stringify(msg));
      this.pingTimer = setInterval(() => this.tick(ws), PING_MS);
    });
    ws.addEventListener("message", (ev) => {
      if (this.ws !== ws) return;
      this.waitingSince = null;
      if (this.stalled) {
        this.stalled = false;
        this.onStatus({ state: "online" });
      }
      let msg;
      try {
        msg = parseFrame(ev.data);
      } catch {
        return;
      }
      if (msg.type === "d" || msg.type === "p" || msg.type === "state" || msg.type === "watch") {
        const whole = this.mirror.take(msg);
        if (typeof whole === "string") {
          // Lost track (a frame missed, a wrong picture): the server sends the whole one.
          this.resyncs.push(whole);
          this.send({ type: "resync", reason: whole });
        }
        if (whole === null || typeof whole === "string") return;
        msg = whole;
      }
      // A seat's first `state` (or a spectator's first `watch`) means the join worked.
      if ((msg.type === "state" || msg.type === "watch") && !this.joined) {
        this.joined = true;
        this.attempt = 0;
        clearTimeout(this.joinTimer);
        this.onStatus({ state: "online" });
      }
      this.onMessage(msg);
    });
    ws.addEventListener("close", (ev) => {
      if (this.ws !== ws || this.closed) return;
      this.stopTimers();
      this.ws = null;
      if (FATAL_CLOSE.has(ev.code)) {
        this.closed = true;
        this.onFatal(ev.code);
        return;
      }
      this.scheduleRetry();
    });
  }

  /** Every PING_MS: a ping, and the verdict on a socket that has gone quiet. */
  tick(ws) {
    if (this.ws !== ws || !this.joined) return;
    const silent = this.waitingSince === null ? 0 : Date.now() - this.waitingSince;
    if (silent > STALL_MS) {
      this.drop(ws);
      return;
    }
    // Unanswered for a whole ping interval: shown now ("stalled"), given up at STALL_MS.
    if (silent >= PING_MS && !this.stalled) {
      this.stalled = true;
      this.onStatus({ state: "stalled" });
    }
    this.send({ type: "ping" });
  }

  /** Give up on `ws` at once (its close handshake may never finish) and retry. */
  drop(ws) {
    this.stopTimers();
    this.ws = null;
    try {
      ws.close(4000, "no answer");
    } catch {
      // Closing a socket that is still connecting throws in some browsers; it is gone anyway.
    }
    this.scheduleRetry();
  }

  stopTimers() {
    clearInterval(this.pingTimer);
    clearTimeout(this.joinTimer);
  }

  scheduleRetry() {
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempt);
    const delay = Math.round(base * (0.75 + Math.random() * 0.5));
    this.attempt += 1;
    this.onStatus({ state: "offline", retryAt: Date.now() + delay });
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  /** Send if the seat is joined; false means the message was not sent. */
  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || (!this.joined && msg.type !== "join")) {
      return false;
    }
    this.ws.send(JSON.stringify(msg));
    if (this.waitingSince === null) this.waitingSince = Date.now();
    return true;
  }

  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.stopTimers();
    window.removeEventListener("online", this.retryNow);
    window.removeEventListener("offline", this.goneOffline);
    document.removeEventListener("visibilitychange", this.onVisible);
    if (this.ws && this.ws.readyState <= 1) this.ws.close(1000);
    this.ws = null;
  }
}
