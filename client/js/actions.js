// What the seat asks of the server: its moves (play, pass, hint, the next deal) and its
// seat actions ("I'm back", the host's), and what a refusal shows.  Sent through
// connection.js; the hand and the redraw of the controls are bound once by main.js.

import { app, reasonText } from "./app.js";
import { send } from "./connection.js";
import { t } from "./i18n.js";
import { announce, toast } from "./narrate.js";
import { cue } from "./sound.js";

let hand = null;
let redraw = () => {};

export function bindActions(parts) {
  ({ hand, redraw } = parts);
}

export function play() {
  const view = app.view;
  if (!view || view.result || app.pending) return;
  const sel = hand.selected();
  if (!sel.length) {
    toast(view.turn === view.seat ? t("toast.selectFirst") : reasonText("not_your_turn"));
    return;
  }
  // Even an unlisted selection goes to the server: its refusal names the exact rule broken.
  send({ type: "play", version: app.version, cards: sel });
}

export function pass() {
  const view = app.view;
  if (!view || view.result || app.pending) return;
  if (!view.can_pass) {
    toast(reasonText(view.pass_reason || "must_beat"));
    cue("error");
    return;
  }
  send({ type: "pass", version: app.version });
}

export function hint() {
  const view = app.view;
  if (!view || view.result) return;
  if (view.turn !== view.seat) {
    toast(reasonText("not_your_turn"));
    return;
  }
  send({ type: "hint", version: app.version });
}

export function onHint(msg) {
  if (msg.version !== app.version) return;
  if (!msg.cards || !msg.cards.length) {
    app.hintLabel = "";
    toast(t("hint.none"));
    redraw();
    return;
  }
  app.hintLabel = msg.count > 1 ? t("hint.nOfM", { n: msg.index + 1, m: msg.count }) : "";
  hand.select(msg.cards);
}

export function nextDeal() {
  const view = app.view;
  if (!view?.result) return;
  send({ type: view.match_over ? "new_match" : "next_deal", version: app.version });
}

// Seat actions ("I'm back", the host's, the bots' speed) are not moves: one made just as
// the table moved on (a bot played) is made again against the newer version (up to
// twice) rather than refused.
// Frames arrive in order, so by the time its `stale_version` comes, app.version is current.
let seatAction = null;

export function sendSeatAction(msg) {
  seatAction = { msg, tries: 0 };
  send({ ...msg, version: app.version });
}

/** A host action's new link came: whatever refusal follows is about something else. */
export function forgetSeatAction() {
  seatAction = null;
}

function retrySeatAction(msg) {
  if (!seatAction) return false;
  if (msg.code !== "stale_version" || seatAction.tries >= 2) {
    seatAction = null;
    return false;
  }
  seatAction.tries += 1;
  send({ ...seatAction.msg, version: app.version });
  return true;
}

/** The seat action took effect: later stale refusals are about something else. */
export function seatActionDone(table) {
  const m = seatAction?.msg;
  if (!m) return;
  const seat = (n) => table.seats.find((s) => s.seat === n) || {};
  if ((m.type === "back" && !seat(app.view?.seat).auto) || (m.type === "auto" && Boolean(seat(app.view?.seat).on_auto) === m.on) || (m.type === "make_bot" && seat(m.seat).kind === "bot") || (m.type === "bot_speed" && table.bot_speed_ms === m.ms)) {
    seatAction = null;
  }
}

export function onError(msg) {
  if (retrySeatAction(msg)) return;
  // msg.version is deliberately not adopted: the next `state` brings it with the view it
  // belongs to, and acting on a newer version with an older view could misplay.
  cue("error");
  toast(reasonText(msg.code, msg.message));
  announce(reasonText(msg.code, msg.message));
}
