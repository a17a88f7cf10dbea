// The app: opens (or rejoins) a table and redraws it from each `state` message.  The server
// decides every rule; this file only wires input to protocol messages and shows what comes
// back.  Its parts: app.js (the shared state), connection.js (the seat's socket, sending),
// actions.js (moves and seat actions), host.js (the host's seat panel), keyboard.js (keys).

import {
  bindActions,
  hint,
  nextDeal,
  onError,
  onHint,
  pass,
  play,
  seatActionDone,
  sendSeatAction,
} from "./actions.js";
import { app, els } from "./app.js";
import { AutoPass } from "./autopass.js";
import { autoRequest, onAuto, renderAutoButton } from "./autoplay.js";
import { SmartSelect } from "./smartselect.js";
import { LastTrick, renderLastTrick, renderLastTrickButton } from "./lasttrick.js";
import { rankString } from "./cards.js";
import { bindConnection, connect, linksFrom, openNewTable, send } from "./connection.js";
import { Hand } from "./hand.js";
import { HistorySheet, replayFromHash } from "./history.js";
import { bindHostPanel, drawHostPanel, onInvite, openInvites } from "./host.js";
import { bindKeyboard } from "./keyboard.js";
import { bombEffect, lastCardEffect, travel } from "./motion.js";
import { cardName, detectLanguage, language, setLanguage, t } from "./i18n.js";
import { Entropy } from "./entropy.js";
import { TurnNotifier } from "./notify.js";
import { registerWorker } from "./pwa.js";
import { FairnessLog, showVerification } from "./verify.js";
import {
  $,
  h,
  placement,
  renderCounter,
  renderMe,
  renderPiles,
  renderResult,
  resultExtrasOf,
  renderSeat,
  statusText,
} from "./render.js";
import { showRules } from "./rules.js";
import {
  decorateMe,
  decorateSeat,
  isHost,
  placeEmotePicker,
  renderAutoBanner,
  renderEmotePicker,
  renderWatchers,
  showEmote,
  syncClock,
  watchedView,
} from "./seats.js";
import { SettingsSheet } from "./settings.js";
import { Celebration, moments } from "./celebrate.js";
import { callOut, setCallouts } from "./callouts.js";
import { applyCardDisplay } from "./display.js";
import { Tour } from "./tour.js";
import { initLobby, showRatingChange } from "./lobby.js";
import { bindNarration, narrate, toast } from "./narrate.js";
import { audioState, cue, played, setSound } from "./sound.js";
import { clearSession, loadSession, saveSession, saveSettings, sessionFromHash } from "./store.js";

bindNarration({ announcer: els.announcer, toast: els.toast });

const smartSelect = new SmartSelect();
const hand = new Hand(els.hand, {
  nameOf: cardName,
  onChange: () => updateControls(),
  smart: (code, selected) => (app.view && app.settings.smartSelect !== false ? smartSelect.tap(app.view, app.version, code, selected) : null),
});
bindConnection({
  onMessage,
  redraw: updateControls,
  onLinkDead,
  // Our table's first deal waits for our seed, sent right after the join (entropy.js).
  opened: (res) => entropy.expectFirst(res.commitment),
  afterJoin: () => entropy.afterJoin(),
});
bindActions({ hand, redraw: updateControls });
const lastTrick = new LastTrick();
// Over the table's box: never over the status line, the hand or the buttons.
const celebration = new Celebration($("#celebration"), () => els.table.getBoundingClientRect());
const tour = new Tour($("#tour"), {
  onShown: () => {
    app.settings.tourSeen = true;
    saveSettings(app.settings);
  },
});
bindHostPanel({ confirm: confirmDialog });

// "Passed automatically" stays in the status line a moment: the trick may clear at once.
const AUTO_NOTE_MS = 3000;
let autoNoteTimer = null;
function noteAutoPass() {
  app.autoNote = true;
  clearTimeout(autoNoteTimer);
  autoNoteTimer = setTimeout(() => {
    app.autoNote = false;
    updateControls();
  }, AUTO_NOTE_MS);
}

const autoPass = new AutoPass({
  pass: (version) => {
    const view = app.view;
    if (version !== app.version || app.pending || app.net.state !== "online" || !view?.can_pass) return false;
    return send({ type: "pass", version });
  },
});

// ---------------------------------------------------------------- frames

const entropy = new Entropy((msg) => Boolean(app.conn?.send(msg)));
const fairness = new FairnessLog();
const turnNotifier = new TurnNotifier({
  settings: app.settings,
  save: () => saveSettings(app.settings),
  input: $("#opt-notify"),
  note: $("#notify-why"),
});

function onMessage(msg) {
  if (msg.type === "state") entropy.onState(msg);
  if (msg.type === "state") fairness.observe(msg, (c) => entropy.given.get(c)?.seed ?? null);
  if (msg.type === "error") fairness.onError(msg);
  if (msg.type === "state") onState(msg);
  else if (msg.type === "watch") onState({ ...msg, view: watched(msg.view) });
  else if (msg.type === "hint") onHint(msg);
  else if (msg.type === "error" && msg.code === "invalid_name") onNameRefused(msg);
  else if (msg.type === "error") onError(msg);
  else if (msg.type === "emote") showEmote(msg.seat, msg.emote);
  else if (msg.type === "invite") onInvite(msg);
}

/** A spectator's view; a quick-match player given a bot's seat (a seat token that gets
 * `watch` frames) watches the deal from that seat until it ends: "joining". */
function watched(view) {
  const seen = watchedView(view);
  if (app.session?.watch) return seen;
  const seat = Number.isInteger(app.session?.seat) ? app.session.seat : seen.seat;
  return { ...seen, seat, joining: true };
}

/** A bot's seat that became a person's (quick match, between deals): say who came.
 * True when it is our own seat: the deal just ended was the bot's, not ours. */
function noticeTakeovers(before, table, view) {
  let ours = false;
  // The same table only: a page that moved to another table compares nothing.
  for (const seat of before?.id === table.id ? table.seats : []) {
    const was = before.seats.find((s) => s.seat === seat.seat);
    if (was?.kind !== "bot" || seat.kind !== "human") continue;
    const mine = seat.seat === view.seat && !view.watching;
    ours ||= mine;
    toast(mine ? t("seat.youTookOver") : t("seat.tookOver", { name: seat.name }));
  }
  return ours;
}

// ---------------------------------------------------------------- state

function onState(msg) {
  seatActionDone(msg.table);
  const tookOver = noticeTakeovers(app.table, msg.table, msg.view);
  const prev = app.view;
  const view = msg.view;
  app.version = msg.version;
  app.table = msg.table;
  app.view = view;
  if (!view.watching && app.session.seat !== view.seat) {
    // Kept with the seat: a host's seat whose table is gone opens a new one, a friend's
    // dead link is said so (connection.js), also after a reload.
    app.session.seat = view.seat;
    saveSession(app.session);
  }
  document.body.classList.toggle("watching", Boolean(view.watching));
  syncClock(msg.table);
  const key = `${msg.table.match_no ?? 0}:${view.deal_no}`;
  const newDeal = key !== app.dealKey;
  app.dealKey = key;
  // The bot played the deal that just ended: its result is one tap away, not put in front.
  if (tookOver) app.resultShownFor = key;
  lastTrick.follow(view, key);
  app.hintLabel = "";
  if (msg.table.bot_speed_ms !== undefined && msg.table.bot_speed_ms !== app.settings.botSpeed) {
    app.settings.botSpeed = msg.table.bot_speed_ms;
    saveSettings(app.settings);
  }
  settings.sync(app.settings, msg.table.bot_speed_ms);

  const fresh = new Set();
  for (const ev of msg.events || []) {
    if (ev.type !== "played" && ev.type !== "passed") continue;
    const mine = [...view.trick].reverse().find((m) => m.seat === ev.seat);
    if (mine) fresh.add(mine);
  }
  const before = prev && !newDeal ? prev.moves.length : 0;
  const autoPassed = autoPass.madeSince(view, key, before);
  if (autoPassed) noteAutoPass();
  if (prev) narrate(msg.events || [], view, msg.table, autoPassed);
  if (prev) callOut(msg.events);
  if (newDeal) hand.clear();
  hand.setCards(view.hand, app.settings.sort, { enter: newDeal ? view.hand : [] });
  render(fresh);
  if (prev) animate(msg.events || [], view);
  if (prev) celebration.show(moments(msg.events, view), { view, table: msg.table });
  if (!app.settings.tourSeen && !view.watching && !document.querySelector("dialog[open]")) tour.start();
  autoPass.consider({ view, version: msg.version, dealKey: key, enabled: app.settings.autoPass });
  syncName();

  const myTurn = view.turn === view.seat;
  if (myTurn && (!prev || prev.turn !== view.seat)) cue("turn");
  turnNotifier.onState(view, prev, msg.table);
  const brand = t("app.title").includes("跑得快") ? t("app.title") : `${t("app.title")} · 跑得快`;
  document.title = myTurn ? `${t("title.yourTurn")} · ${brand}` : brand;

  if (view.result) {
    if (app.resultShownFor !== key) {
      app.resultShownFor = key;
      // Let the final play land on the table before the panel covers it.
      // ...unless a replay is open: the result stays one tap away ("Show result").
      setTimeout(() => els.historySheet.open || openResult(), prev && !prev.result ? 900 : 0);
    } else if (els.resultSheet.open) {
      drawResult();
    }
  } else if (els.resultSheet.open) {
    els.resultSheet.close();
  }
}

/** The server's refusal of our name, said under the name field (it alone knows every rule). */
function onNameRefused(msg) {
  app.refusedName = app.settings.name;
  settings.nameRefused(msg.message);
  toast(t("name.refused", { message: msg.message }));
}

/** Tell the table our chosen name if it shows another one for our seat. */
function syncName() {
  const name = app.settings.name;
  const mine = app.table?.seats?.find((s) => s.seat === app.view?.seat);
  // Once per name and version: a second new name during our own lead (the version stands
  // still) is sent too, and a name the server refused is not sent again.
  const key = `${app.version}:${name}`;
  if (!name || !mine || mine.name === name || app.net.state !== "online" || app.renaming === key || app.refusedName === name) return;
  app.renaming = key;
  send({ type: "rename", version: app.version, name });
}

function render(fresh = new Set()) {
  const { view, table } = app;
  if (!view) return;
  const seats = placement(view.seat);
  renderSeat(els.seatLeft, { view, table, seat: seats.left, side: "left" });
  renderSeat(els.seatRight, { view, table, seat: seats.right, side: "right" });
  decorateSeat(els.seatLeft, { table, seat: seats.left });
  decorateSeat(els.seatRight, { table, seat: seats.right });
  renderPiles(els.piles, { view, table, fresh, autoMade: (move) => autoPass.madeIt(view, app.dealKey, move) });
  renderCounter(els.counter, view, app.settings.counter && !view.watching);
  renderMe(els.meInfo, { view, table });
  decorateMe(els.meInfo, { table, view });
  renderAutoBanner(els.autoBanner, { table, view, onBack: () => sendSeatAction({ type: "back" }) });
  renderAutoButton($("#btn-auto"), { table, view });
  drawLastTrick();
  renderWatchers(els.watchers, table);
  const rules = t(`preset.${view.rules.preset}.name`);
  els.dealInfo.textContent = view.deals > 1 ? `${t("deal.of", { n: view.deal_no, of: view.deals })} · ${rules}` : rules;
  els.dealInfo.title = t(`preset.${view.rules.preset}.summary`);
  $("#btn-invite").hidden = !isHost(view);
  // The history is for the seats (the server answers a watch token 401).
  $("#btn-history").hidden = Boolean(view.watching);
  // Reactions are for company: other people at the table, or someone watching.
  els.emoteButton.hidden = Boolean(view.watching) || (table.humans < 2 && !table.spectators);
  if (els.inviteSheet.open) drawHostPanel();
  updateControls();
}

/** Plays travel in from their seat; bombs and last cards get their effect. */
function animate(events, view) {
  const seats = placement(view.seat);
  const sideOf = (seat) => Object.keys(seats).find((side) => seats[side] === seat);
  const panel = (side) => (side === "me" ? els.hand : side === "left" ? els.seatLeft : els.seatRight);
  for (const ev of events) {
    const side = sideOf(ev.seat);
    if (ev.type === "played" && side) {
      const play = els.piles[side].querySelector(".play");
      travel(play, panel(side));
      if (ev.kind === "bomb") bombEffect(els.table, play);
    } else if (ev.type === "last_card" && side && side !== "me") {
      lastCardEffect(panel(side).querySelector(".seat-card"));
    }
  }
}

/** Enable Play only for a selection the server lists as legal; show why Pass is locked. */
function updateControls() {
  const view = app.view;
  const online = app.net.state === "online";
  if (!view) {
    for (const b of [els.play, els.pass, els.hint, els.clear]) b.setAttribute("aria-disabled", "true");
    return;
  }
  const over = Boolean(view.result);
  els.controls.hidden = over;
  els.afterDeal.hidden = !over;
  els.continue.textContent = view.match_over ? t("result.newMatch") : t("result.nextDeal");
  // On auto the stand-in has our turns: the server would refuse our own moves.
  const myTurn = view.turn === view.seat && !onAuto(app.table, view.seat);
  const sel = hand.selected();
  const waiting = Boolean(app.pending);
  const legal = myTurn && sel.length > 0 && isLegal(view, sel);
  setEnabled(els.play, legal && online && !waiting);
  els.play.classList.toggle("ready", legal);
  els.controls.setAttribute("aria-busy", String(Boolean(app.pending?.shown)));
  setEnabled(els.pass, myTurn && view.can_pass && online && !waiting);
  els.pass.classList.toggle("locked", myTurn && !view.can_pass);
  els.pass.classList.toggle("suggested", myTurn && view.can_pass);
  els.passWhy.textContent = myTurn && !view.can_pass && view.pass_reason ? t(`passWhy.${view.pass_reason}`) : "";
  setEnabled(els.hint, myTurn && online && view.legal.length > 0);
  setEnabled(els.clear, sel.length > 0);
  const hintChip = app.hintLabel && myTurn ? h("span", { class: "chip", text: app.hintLabel }) : "";
  // Bots that answer at once may hand the turn straight back: the note stays even then,
  // ahead of the text, so that the line clamp cuts the text and never the note.
  const autoChip = app.autoNote && !hintChip ? h("span", { class: "chip auto", text: t("move.autoPass") }) : "";
  const text = statusText({ view, table: app.table });
  if (app.pending?.shown) els.status.replaceChildren(h("span", { class: "pending", text: t("net.pending") }));
  else if (autoChip) els.status.replaceChildren(autoChip, text);
  else els.status.replaceChildren(text, hintChip);
}

function isLegal(view, sel) {
  if (!view.legal.includes(rankString(sel))) return false;
  return !view.must_include || sel.includes(view.must_include);
}

function setEnabled(button, on) {
  // aria-disabled rather than `disabled`: the button stays focusable and clickable, so
  // pressing it can still explain why nothing happens.
  button.setAttribute("aria-disabled", String(!on));
}

// ---------------------------------------------------------------- result

function drawResult() {
  renderResult(els.resultBody, {
    view: app.view,
    table: app.table,
    onNext: nextDeal,
    onNewMatch: nextDeal,
    onClose: () => els.resultSheet.close(),
  });
  const extras = resultExtrasOf(els.resultBody);
  if (extras) {
    showRatingChange(extras, app.session?.table);
    showVerification(extras, app.table.id, app.table.match_no ?? 0);
  }
}

function openResult() {
  if (!app.view?.result) return;
  drawResult();
  for (const d of document.querySelectorAll("dialog[open]")) if (d !== els.resultSheet) d.close();
  if (!els.resultSheet.open) els.resultSheet.showModal();
  celebration.raise();
  const won = app.view.match_over ? app.view.winners.includes(app.view.seat) : app.view.result.winner === app.view.seat;
  cue(won ? "win" : "lose");
  els.resultSheet.querySelector(".btn-play")?.focus();
}

// ---------------------------------------------------------------- sheets

function confirmDialog(text) {
  return new Promise((resolve) => {
    const d = els.confirmSheet;
    $("#confirm-text", d).textContent = text;
    d.returnValue = "";
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.showModal();
  });
}

const settings = new SettingsSheet({
  dialog: els.settingsSheet,
  settings: app.settings,
  confirm: confirmDialog,
  onDisplay: async (patch) => {
    Object.assign(app.settings, patch);
    saveSettings(app.settings);
    if (patch.lang) {
      await setLanguage(patch.lang);
      hand.relabel();
    }
    applyDisplay();
    if (patch.cardSize) hand.redraw();
    settings.sync(app.settings);
  },
  onSpeed: (ms) => {
    app.settings.botSpeed = ms;
    saveSettings(app.settings);
    settings.sync(app.settings, ms);
    // A seat action: made again if a move lands first (the speed is not a move).
    if (app.view) sendSeatAction({ type: "bot_speed", ms });
  },
  onName: (name) => {
    app.settings.name = name;
    saveSettings(app.settings);
    syncName();
  },
  onNewTable: (table) => {
    Object.assign(app.settings, table);
    saveSettings(app.settings);
    clearSession();
    app.resultShownFor = null;
    openNewTable();
  },
});

function applyDisplay() {
  const s = app.settings;
  document.body.classList.toggle("four-colour", s.fourColour);
  applyCardDisplay(s);
  setSound(s.sound);
  setCallouts(s);
  if (app.view) {
    hand.setCards(app.view.hand, s.sort);
    render();
    if (els.resultSheet.open) drawResult();
  }
}

const historySheet = new HistorySheet({
  dialog: els.historySheet,
  mySeat: () => app.view?.seat ?? app.session?.seat ?? 0,
  onCopied: () => toast(t("invite.copied")),
});

/** Open the history of our table (or a replay link's deal, if it is our table). */
function openHistory(pick = null) {
  const session = app.session;
  if (!session?.table || !session?.token || session.watch) return;
  if (pick && pick.table !== session.table) {
    toast(t("history.notSeated"));
    return;
  }
  for (const d of document.querySelectorAll("dialog[open]")) if (d.id !== "history-sheet") d.close();
  historySheet.open(session.table, session.token, pick);
}

// ---------------------------------------------------------------- dead links

/** Our seat link no longer works (replaced by the host, or its table is gone): say so and
 * let the player choose; a table of our own opens only when they ask for one. */
function onLinkDead() {
  app.conn = null;
  app.view = null;
  els.status.textContent = t("link.deadStatus");
  els.net.hidden = true; // nothing is connecting: the sheet says what happened
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
  const d = els.linkSheet;
  d.returnValue = "";
  d.addEventListener("close", () => d.returnValue === "alone" && openNewTable(), { once: true });
  d.showModal();
}

// ---------------------------------------------------------------- the last trick

/** The switch, and the panel while it is open (it closes when there is nothing to show). */
function drawLastTrick() {
  const { view, table } = app;
  const panel = $("#last-trick");
  const usable = renderLastTrickButton($("#btn-last-trick"), { view, last: lastTrick });
  if (!usable) toggleLastTrick(false);
  else if (!panel.hidden) renderLastTrick(panel, { view, table, last: lastTrick });
}

function toggleLastTrick(open = $("#last-trick").hidden) {
  const panel = $("#last-trick");
  const button = $("#btn-last-trick");
  if (open && (!app.view || button.getAttribute("aria-disabled") === "true")) {
    toast(t("lastTrick.none"));
    return;
  }
  panel.hidden = !open;
  button.setAttribute("aria-expanded", String(open));
  if (!open) return;
  renderLastTrick(panel, { view: app.view, table: app.table, last: lastTrick });
  // Over the table, between the top bar and our strip: the hand and buttons stay usable.
  const area = els.table.getBoundingClientRect();
  panel.style.top = `${Math.round(area.top + 4)}px`;
  panel.style.maxHeight = `${Math.round(area.height - 8)}px`;
}

// ---------------------------------------------------------------- emotes

function toggleEmotes(open = els.emotePicker.hidden) {
  els.emotePicker.hidden = !open;
  els.emoteButton.setAttribute("aria-expanded", String(open));
  placeEmotePicker(els.emotePicker);
  if (open) els.emotePicker.querySelector("button")?.focus();
}

// ---------------------------------------------------------------- input

function bindInput() {
  els.play.addEventListener("click", play);
  els.pass.addEventListener("click", pass);
  els.hint.addEventListener("click", hint);
  els.clear.addEventListener("click", () => hand.clear());
  els.continue.addEventListener("click", nextDeal);
  els.showResult.addEventListener("click", openResult);
  $("#btn-settings").addEventListener("click", () => settings.open());
  $("#btn-tour").addEventListener("click", () => tour.start());
  $("#btn-rules").addEventListener("click", () => showRules(els.rulesSheet, $("#rules-page")).catch((e) => toast(String(e))));
  $("#btn-invite").addEventListener("click", openInvites);
  $("#btn-history").addEventListener("click", () => openHistory());
  $("#btn-last-trick").addEventListener("click", () => toggleLastTrick());
  // A tap on the panel (or anywhere else but its switch) puts it away.
  document.addEventListener("pointerdown", (e) => {
    if (!$("#last-trick").hidden && !e.target.closest("#btn-last-trick")) toggleLastTrick(false);
  });
  $("#btn-auto").addEventListener("click", () => app.view && sendSeatAction(autoRequest(app.table, app.view)));
  renderEmotePicker(els.emotePicker, (emote) => {
    send({ type: "emote", emote });
    toggleEmotes(false);
  });
  els.emoteButton.addEventListener("click", () => toggleEmotes());
  // A click on the dimmed backdrop closes a sheet, as on phones.
  for (const d of document.querySelectorAll("dialog")) {
    d.addEventListener("click", (e) => {
      if (e.target === d && d !== els.confirmSheet) d.close();
    });
  }
  bindKeyboard({
    hand: els.hand,
    play,
    pass,
    hint,
    clear: () => hand.clear(),
    emotesOpen: () => !els.emotePicker.hidden,
    closeEmotes: () => toggleEmotes(false),
    lastTrick: () => toggleLastTrick(),
    closePanels: () => toggleLastTrick(false),
  });
}

// ---------------------------------------------------------------- start

async function start() {
  registerWorker();
  await setLanguage(app.settings.lang || detectLanguage());
  applyDisplay();
  bindInput();
  // A room code or recovery link in the address becomes what it leads to first.
  await initLobby();
  const replay = replayFromHash();
  if (replay) history.replaceState(null, "", location.pathname + location.search);
  const invited = sessionFromHash();
  if (invited?.watch) {
    // Watching keeps the link in the address bar (a reload watches on) and leaves our own
    // seat, if any, saved for later.
    app.session = invited;
  } else if (invited) {
    // Keep the seat, then drop the secret token from the address bar.  `invited`: the
    // seat came as a link, so a dead one is said so (onLinkDead) instead of replaced.
    app.session = { ...invited, invited: true };
    saveSession(app.session);
    history.replaceState(null, "", location.pathname + location.search);
  } else {
    app.session = loadSession();
  }
  app.links = linksFrom(app.session);
  if (app.session?.table && app.session?.token) connect();
  else await openNewTable();
  if (replay) openHistory(replay);
  window.addEventListener("hashchange", () => {
    const pick = replayFromHash();
    if (pick) {
      history.replaceState(null, "", location.pathname + location.search);
      openHistory(pick);
      return;
    }
    const next = sessionFromHash();
    if (!next) return;
    if (app.conn) app.conn.close();
    app.session = next;
    app.links = linksFrom(next);
    if (!next.watch) {
      app.session = { ...next, invited: true };
      saveSession(app.session);
      history.replaceState(null, "", location.pathname + location.search);
    }
    connect();
  });
}

// For tests and curious players: the current state, read-only.
Object.defineProperty(window, "pdk", {
  value: Object.freeze({
    state: () => ({ version: app.version, view: app.view, table: app.table, net: app.net.state, lang: language() }),
    // The cues played so far (names), to check the sound setting is honoured.
    sounds: () => [...played()],
    // The audio context: "running" while cues ring, "suspended" once they are over.
    audio: () => audioState(),
    // The celebrations shown so far ({kind, seats, text}), newest last.
    celebrations: () => celebration.log.map((c) => ({ ...c })),
  }),
});

start();
