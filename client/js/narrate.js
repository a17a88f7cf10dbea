// What the player hears and glimpses: aria-live narration of each event, and toasts.
// The messages come from the server's events; this file only words them.

import { t } from "./i18n.js";
import { describeMove, h, seatName } from "./render.js";
import { cue } from "./sound.js";

let announcerEl = null;
let toastEl = null;

export function bindNarration({ announcer, toast: toastElement }) {
  announcerEl = announcer;
  toastEl = toastElement;
}

export function narrate(events, view, table, autoPassed = false) {
  const lines = [];
  const name = (s) => seatName(table, view, s);
  for (const ev of events) {
    switch (ev.type) {
      case "played":
        lines.push(t(ev.seat === view.seat ? "say.youPlay" : "say.plays", { name: name(ev.seat), move: describeMove(ev) }));
        cue(ev.kind === "bomb" ? "bomb" : "play");
        break;
      case "passed":
        if (ev.seat !== view.seat) lines.push(t("say.passes", { name: name(ev.seat) }));
        else lines.push(t(autoPassed ? "say.youAutoPass" : "say.youPass"));
        cue("pass");
        break;
      case "trick_cleared":
        lines.push(t(ev.leader === view.seat ? "say.youLead" : "say.leads", { name: name(ev.leader) }));
        break;
      case "last_card":
        lines.push(t(ev.seat === view.seat ? "say.youLastCard" : "say.lastCard", { name: name(ev.seat) }));
        // Its call-out (spoken or a beep) is callouts.js's.
        break;
      case "bomb_paid":
        lines.push(t(ev.seat === view.seat ? "say.youBombPaid" : "say.bombPaid", { name: name(ev.seat), n: ev.points[ev.seat] }));
        break;
      case "deal_started":
        lines.push(t("say.dealStarted", { n: ev.deal_no, name: name(ev.leader) }));
        break;
      case "deal_ended":
        lines.push(t(ev.winner === view.seat ? "say.youWinDeal" : "say.winsDeal", { name: name(ev.winner) }));
        break;
      case "match_ended":
        lines.push(t("say.matchOver", { names: ev.winners.map(name).join(t("match.and")) }));
        break;
      default:
        break;
    }
  }
  if (view.turn === view.seat && events.length) lines.push(t("say.yourTurn"));
  if (lines.length) announce(lines.join(" "));
}

export function announce(text) {
  const line = h("span", { text: `${text} ` });
  announcerEl.append(line);
  while (announcerEl.childElementCount > 4) announcerEl.firstElementChild.remove();
}

let toastTimer = null;
export function toast(text) {
  toastEl.textContent = text;
  toastEl.hidden = false;
  toastEl.classList.remove("show");
  void toastEl.offsetWidth; // restart the entrance animation
  toastEl.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    toastEl.hidden = true;
  }, 3800);
}
