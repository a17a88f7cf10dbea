// The first-game tour: a few steps pointing at the hand, the Play/Pass buttons, the status
// line and the settings.  Shown once (`settings.tourSeen`), again from the settings sheet.
// A modal dialog: the rest of the page is inert while it is open, Tab cycles through its
// own buttons only, Escape (the dialog's cancel) skips it.

import { t } from "./i18n.js";
import { h } from "./render.js";

export const STEPS = [
  { target: "#hand", key: "hand" },
  { target: "#controls", key: "buttons" },
  { target: "#status", key: "status" },
  { target: "#btn-settings", key: "settings" },
];

const GAP = 10; // between the highlighted element and the step's card
const EDGE = 8; // from the viewport's edges

export class Tour {
  /** `dialog`: the tour's <dialog>; `onShown()`: the tour was opened (remember it). */
  constructor(dialog, { onShown }) {
    this.dialog = dialog;
    this.onShown = onShown;
    this.step = 0;
    dialog.addEventListener("keydown", (e) => this.trap(e));
    window.addEventListener("resize", () => this.dialog.open && this.place());
  }

  get open() {
    return this.dialog.open;
  }

  start() {
    for (const d of document.querySelectorAll("dialog[open]")) if (d !== this.dialog) d.close();
    this.step = 0;
    if (!this.dialog.open) this.dialog.showModal();
    this.onShown();
    this.draw();
  }

  go(step) {
    if (step >= STEPS.length) {
      this.dialog.close("done");
      return;
    }
    this.step = Math.max(0, step);
    this.draw();
  }

  draw() {
    const { key } = STEPS[this.step];
    const last = this.step === STEPS.length - 1;
    const card = h(
      "section",
      { class: "tour-card" },
      h("p", { class: "tour-progress", text: t("tour.progress", { step: this.step + 1, of: STEPS.length }) }),
      h("h2", { id: "tour-title", text: t(`tour.${key}.title`) }),
      h("p", { id: "tour-text", text: t(`tour.${key}.text`) }),
      h(
        "div",
        { class: "tour-actions" },
        h("button", { type: "button", class: "btn tour-skip", id: "tour-skip", text: t("tour.skip"), onclick: () => this.dialog.close("skip") }),
        this.step > 0 ? h("button", { type: "button", class: "btn tour-back", id: "tour-back", text: t("tour.back"), onclick: () => this.go(this.step - 1) }) : null,
        h("button", { type: "button", class: "btn btn-play tour-next", id: "tour-next", text: t(last ? "tour.done" : "tour.next"), onclick: () => this.go(this.step + 1) }),
      ),
    );
    this.dialog.dataset.step = key;
    this.dialog.replaceChildren(h("div", { class: "tour-ring", "aria-hidden": "true" }), card);
    this.place();
    card.querySelector(".tour-next").focus();
  }

  /** The ring around this step's element and the card beside it, both on screen. */
  place() {
    const ring = this.dialog.querySelector(".tour-ring");
    const card = this.dialog.querySelector(".tour-card");
    if (!ring || !card) return;
    const W = window.innerWidth;
    const H = window.innerHeight;
    const target = document.querySelector(STEPS[this.step].target);
    const r = target?.getClientRects().length ? target.getBoundingClientRect() : null;
    const width = Math.min(360, W - 2 * EDGE);
    card.style.width = `${width}px`;
    if (!r) {
      ring.hidden = true;
      card.style.left = `${(W - width) / 2}px`;
      card.style.top = `${Math.max(EDGE, (H - card.offsetHeight) / 2)}px`;
      return;
    }
    ring.hidden = false;
    const box = {
      left: Math.max(0, r.left - 4),
      top: Math.max(0, r.top - 4),
      right: Math.min(W, r.right + 4),
      bottom: Math.min(H, r.bottom + 4),
    };
    Object.assign(ring.style, {
      left: `${box.left}px`,
      top: `${box.top}px`,
      width: `${box.right - box.left}px`,
      height: `${box.bottom - box.top}px`,
    });
    const tall = card.offsetHeight;
    const above = box.top - GAP - EDGE;
    const below = H - box.bottom - GAP - EDGE;
    let top;
    if (below >= tall && below >= above) top = box.bottom + GAP;
    else if (above >= tall) top = box.top - GAP - tall;
    else top = below > above ? H - EDGE - tall : EDGE; // no room clear of it: the roomier side
    const centre = (box.left + box.right) / 2;
    const left = Math.min(W - EDGE - width, Math.max(EDGE, centre - width / 2));
    card.style.left = `${Math.round(left)}px`;
    card.style.top = `${Math.round(top)}px`;
  }

  /** Tab and Shift+Tab go round the tour's own buttons. */
  trap(e) {
    if (e.key !== "Tab") return;
    const buttons = [...this.dialog.querySelectorAll("button")];
    if (!buttons.length) return;
    const at = buttons.indexOf(document.activeElement);
    const next = e.shiftKey ? (at <= 0 ? buttons.length - 1 : at - 1) : at === -1 || at === buttons.length - 1 ? 0 : at + 1;
    e.preventDefault();
    buttons[next].focus();
  }
}
