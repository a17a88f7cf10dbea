// Everything around the seats: the turn clock, the stand-in ("auto") marker and "I'm back",
// the host's seat controls, watching as a spectator, and quick emotes.  The server decides
// all of it; this module only draws what `state.table` says and turns clicks into messages.

import { EMOTE_ART, emoteSvg } from "./emote_art.js";
import { t } from "./i18n.js";
import { h, redraw, seatInfo, seatName } from "./render.js";

export const HOST_SEAT = 0;
// The server's fixed set (server/rooms/emotes.py); anything else is refused.  Each is drawn
// by emote_art.js, never with the system's emoji font (which many systems lack).
export const EMOTES = Object.fromEntries(Object.keys(EMOTE_ART).map((name) => [name, name]));
const EMOTE_SHOW_MS = 2600;
const LOW_MS = 10000;

// ---------------------------------------------------------------- turn clock

// The running clock, in this page's own time: the server sends the milliseconds left, so a
// wrong clock on this device cannot shorten or stretch anyone's turn.
let clock = null;
let ticker = null;

/** Follow `table.clock` ({seat, deadline, remaining_ms} or null) from a new state. */
export function syncClock(table) {
  const c = table?.clock;
  clock = c ? { seat: c.seat, endsAt: performance.now() + c.remaining_ms, totalMs: Math.max(1, table.turn_seconds || 0) * 1000 } : null;
  drawClocks();
  if (clock && !ticker) ticker = setInterval(drawClocks, 200);
  if (!clock && ticker) {
    clearInterval(ticker);
    ticker = null;
  }
}

/** Milliseconds left on `seat`'s clock, or null when no clock runs for it. */
export function clockLeft(seat) {
  if (!clock || clock.seat !== seat) return null;
  return Math.max(0, clock.endsAt - performance.now());
}

function clockElement(seat) {
  return h(
    "div",
    { class: "clock", "data-clock-seat": String(seat), role: "timer", hidden: true },
    h("span", { class: "clock-bar", "aria-hidden": "true" }, h("i")),
    h("span", { class: "clock-s" }),
  );
}

function drawClocks() {
  for (const el of document.querySelectorAll("[data-clock-seat]")) {
    const left = clockLeft(Number(el.dataset.clockSeat));
    el.hidden = left === null;
    if (left === null) continue;
    const s = Math.ceil(left / 1000);
    el.style.setProperty("--left", String(Math.min(1, left / clock.totalMs)));
    el.classList.toggle("low", left <= LOW_MS);
    el.querySelector(".clock-s").textContent = t("clock.seconds", { s });
    el.setAttribute("aria-label", t("clock.left", { s }));
  }
}

// ---------------------------------------------------------------- seat decorations

/** The stand-in played this seat's last turn (or plays all of them until hand-back). */
export const isAuto = (table, seat) => Boolean(seatInfo(table, seat).auto);

/** Add the clock, the auto marker and an emote anchor to a freshly drawn seat panel. */
export function decorateSeat(el, { table, seat }) {
  const card = el.querySelector(".seat-card");
  if (!card) return;
  card.dataset.seat = String(seat);
  card.classList.toggle("is-auto", isAuto(table, seat));
  if (isAuto(table, seat)) card.querySelector(".badges")?.prepend(autoBadge());
  card.append(clockElement(seat));
  drawClocks();
}

/** The same for the player's own strip (or the watched seat 0 of a spectator). */
export function decorateMe(el, { table, view }) {
  el.dataset.seat = String(view.seat);
  if (view.watching) el.prepend(h("span", { class: "badge watching", text: t(view.joining ? "watch.joining" : "watch.label") }));
  if (isAuto(table, view.seat)) el.append(autoBadge());
  el.append(clockElement(view.seat));
  drawClocks();
}

function autoBadge() {
  return h("span", { class: "badge auto", title: t("auto.title"), text: t("badge.auto") });
}

/** The banner that tells a player a stand-in is playing for them, with "I'm back". */
export function renderAutoBanner(el, { table, view, onBack }) {
  const show = !view.watching && isAuto(table, view.seat);
  el.hidden = !show;
  if (!show) return;
  const info = seatInfo(table, view.seat);
  redraw(
    el,
    h("span", { text: t(info.on_auto ? "auto.onAuto" : "auto.stoodIn") }),
    h("button", { type: "button", class: "btn btn-play", id: "btn-back", onclick: onBack, text: t("auto.back") }),
  );
}

// ---------------------------------------------------------------- host panel

export const isHost = (view) => !view.watching && view.seat === HOST_SEAT;

/**
 * The host's seat controls: per other seat, its state and what the host may do with it,
 * the links handed out so far, and the watch link.  `send(msg)` sends a versioned action.
 */
export function renderHostPanel(el, { table, view, links, send, confirm, copy }) {
  const betweenDeals = Boolean(view.result);
  const rows = table.seats
    .filter((s) => s.seat !== view.seat)
    .map((info) => {
      const name = seatName(table, view, info.seat);
      const state = info.kind === "bot" ? t("seat.bot", { level: t(`level.${info.level || "normal"}`) }) : info.auto ? t("badge.auto") : info.connected ? t("host.present") : t("seat.away");
      const buttons = [];
      if (info.kind === "human") {
        buttons.push(
          h("button", { type: "button", class: "btn", "data-action": "invite", onclick: () => send({ type: "invite", seat: info.seat }), text: t("host.newInvite") }),
          h("button", {
            type: "button",
            class: "btn",
            "data-action": "make_bot",
            "aria-disabled": String(info.connected),
            title: info.connected ? t("reason.seat_present") : "",
            onclick: async () => {
              if (info.connected) return;
              if (await confirm(t("host.confirmBot", { name }))) send({ type: "make_bot", seat: info.seat });
            },
            text: t("host.makeBot"),
          }),
        );
      } else {
        buttons.push(
          h("button", {
            type: "button",
            class: "btn",
            "data-action": "open_seat",
            "aria-disabled": String(!betweenDeals),
            title: betweenDeals ? "" : t("reason.not_between_deals"),
            onclick: () => send({ type: "open_seat", seat: info.seat }),
            text: t("host.openSeat"),
          }),
        );
      }
      const link = links.seats[info.seat];
      return h(
        "li",
        { class: "host-seat", "data-seat": String(info.seat) },
        h("span", { class: "invite-seat" }, name, h("small", { text: ` · ${state}` })),
        link ? linkRow(link, t("invite.link", { n: info.seat + 1 }), copy) : null,
        h("div", { class: "host-actions" }, buttons),
      );
    });
  const watch = h(
    "li",
    { class: "host-watch" },
    h("span", { class: "invite-seat" }, t("host.watch"), h("small", { text: ` · ${t("watch.count", { n: table.spectators || 0 })}` })),
    links.watch ? linkRow(links.watch, t("host.watch"), copy) : null,
    h("div", { class: "host-actions" }, h("button", { type: "button", class: "btn", "data-action": "watch_link", onclick: () => send({ type: "watch_link" }), text: t(links.watch ? "host.newWatch" : "host.makeWatch") })),
  );
  redraw(el, ...rows, watch);
}

function linkRow(path, label, copy) {
  const url = new URL(path, location.href).href;
  const input = h("input", { type: "text", readonly: true, value: url, "aria-label": label });
  return h("div", { class: "link-row" }, input, h("button", { type: "button", class: "btn", onclick: () => copy(input, url), text: t("invite.copy") }));
}

// ---------------------------------------------------------------- spectators

/** A spectator's public view, shaped like a seat view watched from seat 0 with no hand. */
export function watchedView(view) {
  return { ...view, seat: HOST_SEAT, watching: true, hand: [], legal: [], hints: [], must_include: null, can_pass: false, pass_reason: null, counter: {} };
}

/** The eye with the number of spectators, shown to everyone when anyone watches. */
export function renderWatchers(el, table) {
  const n = table?.spectators || 0;
  el.hidden = n === 0;
  const eye = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  eye.setAttribute("viewBox", "0 0 24 24");
  eye.setAttribute("aria-hidden", "true");
  eye.innerHTML = '<path d="M12 5C6.5 5 2.7 9.4 1.5 12c1.2 2.6 5 7 10.5 7s9.3-4.4 10.5-7C21.3 9.4 17.5 5 12 5zm0 11.5a4.5 4.5 0 1 1 0-9 4.5 4.5 0 0 1 0 9zm0-2.5a2 2 0 1 0 0-4 2 2 0 0 0 0 4z"/>';
  el.replaceChildren(eye, h("span", { text: String(n) }));
  el.title = t("watch.count", { n });
  el.setAttribute("aria-label", t("watch.count", { n }));
}

// ---------------------------------------------------------------- emotes

/** Keep the open picker clear of the seats' panels and our own strip: it sits over the
 * middle of the table, just above our strip. */
export function placeEmotePicker(el) {
  if (el.hidden) return;
  const me = document.querySelector("#me").getBoundingClientRect();
  el.style.top = "auto";
  el.style.bottom = `${Math.round(innerHeight - me.top + 6)}px`;
}

/** The row of emote buttons; `onPick(name)` sends one. */
export function renderEmotePicker(el, onPick) {
  el.replaceChildren(
    ...Object.keys(EMOTES).map((name) =>
      h("button", { type: "button", class: "emote-btn", "data-emote": name, title: t(`emote.${name}`), "aria-label": t(`emote.${name}`), onclick: () => onPick(name) }, emoteSvg(name)),
    ),
  );
}

/** Show `emote` briefly at `seat`'s place on the table (above the panels, which redraw). */
export function showEmote(seat, emote) {
  const known = Object.hasOwn(EMOTES, emote);
  const anchor = document.querySelector(`.seat-card[data-seat="${seat}"]`) || document.querySelector(`#me-info[data-seat="${seat}"]`);
  if (!known || !anchor) return;
  const r = anchor.getBoundingClientRect();
  const bubble = h("span", {
    class: "emote-bubble",
    "data-seat": String(seat),
    role: "img",
    "aria-label": t(`emote.${emote}`),
    style: `left:${Math.round(r.left + r.width / 2)}px;top:${Math.round(r.top)}px`,
  }, emoteSvg(emote));
  document.body.append(bubble);
  setTimeout(() => bubble.remove(), EMOTE_SHOW_MS);
}
