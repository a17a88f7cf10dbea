// "Tell me when it is my turn": a system notification when our turn starts while the tab
// is hidden (another tab in front, the window minimised), so a player can wait elsewhere.
// Off by default; switching it on asks the browser's permission, and a refusal switches it
// back off with the reason. Never while the page is visible (the page itself shows the
// turn), never for a spectator (no turn of theirs). Clicking the notification brings the
// tab back; it closes by itself when the page is seen again or the turn has passed.

import { t } from "./i18n.js";

const TAG = "pdk-turn";

function supported() {
  return typeof window.Notification === "function";
}

export class TurnNotifier {
  /** `settings`: the saved settings (`notifyTurn`), `save()` stores them; `input`: the
   *  switch, `note`: where a refusal is explained. */
  constructor({ settings, save, input, note }) {
    Object.assign(this, { settings, save, input, note });
    this.shown = null;
    this.viaWorker = false;
    input.addEventListener("change", () => this.toggle(input.checked));
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.close();
    });
    // The browser's permission may change while the page is open: read it as the sheet opens.
    const sheet = input.closest("dialog");
    if (sheet) new MutationObserver(() => sheet.open && this.sync()).observe(sheet, { attributes: true, attributeFilter: ["open"] });
  }

  /** Whether a notification may be shown now: asked for, and allowed by the browser. */
  enabled() {
    return Boolean(this.settings.notifyTurn) && supported() && Notification.permission === "granted";
  }

  /** The switch as the setting and the browser's permission stand. */
  sync() {
    this.input.checked = this.enabled();
    this.note.textContent = supported() ? (Notification.permission === "denied" && this.settings.notifyTurn ? t("notify.blocked") : "") : t("notify.unsupported");
  }

  async toggle(on) {
    this.note.textContent = "";
    if (on && !supported()) {
      this.input.checked = false;
      this.note.textContent = t("notify.unsupported");
      return;
    }
    let allowed = !on || Notification.permission === "granted";
    if (on && !allowed) allowed = (await Notification.requestPermission()) === "granted";
    this.settings.notifyTurn = on && allowed;
    this.save();
    this.input.checked = this.settings.notifyTurn;
    if (on && !allowed) this.note.textContent = t("notify.blocked");
  }

  /** Each state: a notification if our turn has just started and nobody sees the page
   *  (not while the stand-in plays our seat on auto: it takes those turns itself). */
  onState(view, prev, table) {
    const onAuto = Boolean(table?.seats?.[view.seat]?.on_auto);
    const mine = !view.watching && !onAuto && view.turn === view.seat && view.result === null;
    if (!mine) {
      this.close();
      return;
    }
    // Bots that answer at once hand the turn straight back in the frame of our own move:
    // a turn starts whenever someone has moved since the last frame, not only when the
    // turn was another seat's.
    const started = !prev || prev.turn !== view.seat || prev.deal_no !== view.deal_no || prev.moves.length !== view.moves.length;
    if (!started || document.visibilityState !== "hidden" || !this.enabled()) return;
    this.show();
  }

  show() {
    this.close();
    const title = t("title.yourTurn");
    const options = { body: t("notify.body"), tag: TAG, icon: "icons/icon-192.png", lang: document.documentElement.lang };
    try {
      const note = new Notification(title, options);
      note.addEventListener("click", () => {
        window.focus();
        note.close();
      });
      this.shown = note;
    } catch {
      // Where pages may not construct one (Chrome on Android), the service worker shows
      // it; its click handler focuses this tab (sw.js).
      if (!navigator.serviceWorker?.controller) return;
      this.viaWorker = true;
      navigator.serviceWorker.ready.then((reg) => reg.showNotification(title, options)).catch(() => {});
    }
  }

  close() {
    this.shown?.close();
    this.shown = null;
    if (!this.viaWorker) return;
    this.viaWorker = false;
    navigator.serviceWorker.ready
      .then((reg) => reg.getNotifications({ tag: TAG }))
      .then((list) => list.forEach((n) => n.close()))
      .catch(() => {});
  }
}
