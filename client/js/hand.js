// The player's own hand: drawing, selection by tap, by dragging across a run, and by keyboard.
// It only tracks which card codes are selected; whether they make a play is the server's call.

import { cardElement, sortCodes } from "./cards.js";

export class Hand {
  constructor(el, { nameOf, onChange }) {
    this.el = el;
    this.nameOf = nameOf;
    this.onChange = onChange;
    this.codes = [];
    this.chosen = new Set();
    this.focus = 0;
    this.drag = null;
    this.enabled = true;
    el.addEventListener("pointerdown", (e) => this.pointerDown(e));
    el.addEventListener("pointermove", (e) => this.pointerMove(e));
    el.addEventListener("pointerup", () => this.pointerUp());
    el.addEventListener("pointercancel", () => this.pointerUp());
    el.addEventListener("keydown", (e) => this.keyDown(e));
    el.addEventListener("focusin", (e) => {
      const card = e.target.closest(".card");
      if (card) this.focus = this.indexOf(card.dataset.code);
    });
  }

  /** Draw `codes` (sorted by `mode`), keeping the selection of cards still held. */
  setCards(codes, mode, { enter = [] } = {}) {
    const sorted = sortCodes(codes, mode);
    const same = sorted.length === this.codes.length && sorted.every((c, i) => c === this.codes[i]);
    const had = this.el.contains(document.activeElement);
    this.codes = sorted;
    for (const c of [...this.chosen]) if (!sorted.includes(c)) this.chosen.delete(c);
    this.focus = Math.max(0, Math.min(this.focus, sorted.length - 1));
    if (!same) this.draw(new Set(enter));
    else this.sync();
    if (had && sorted.length) this.cardAt(this.focus)?.focus({ preventScroll: true });
  }

  draw(entering) {
    const slots = this.codes.map((code, i) => {
      const slot = document.createElement("div");
      slot.className = "slot";
      const card = cardElement(code, { name: this.nameOf(code) });
      card.setAttribute("role", "option");
      card.style.setProperty("--i", i);
      if (entering.has(code)) card.classList.add("dealt");
      slot.append(card);
      return slot;
    });
    this.el.replaceChildren(...slots);
    this.el.style.setProperty("--n", Math.max(this.codes.length, 1));
    this.sync();
  }

  /** Reflect selection and focus on the drawn cards without redrawing them. */
  sync() {
    this.el.querySelectorAll(".card").forEach((card, i) => {
      const on = this.chosen.has(card.dataset.code);
      card.classList.toggle("selected", on);
      card.setAttribute("aria-selected", String(on));
      card.tabIndex = i === this.focus ? 0 : -1;
    });
  }

  relabel() {
    this.el.querySelectorAll(".card").forEach((card) => {
      card.setAttribute("aria-label", this.nameOf(card.dataset.code));
    });
  }

  selected() {
    return this.codes.filter((c) => this.chosen.has(c));
  }

  select(codes) {
    this.chosen = new Set(codes.filter((c) => this.codes.includes(c)));
    this.changed();
  }

  clear() {
    if (!this.chosen.size) return;
    this.chosen.clear();
    this.changed();
  }

  toggle(code, on = !this.chosen.has(code)) {
    if (on === this.chosen.has(code)) return;
    if (on) this.chosen.add(code);
    else this.chosen.delete(code);
    this.changed();
  }

  changed() {
    this.sync();
    this.onChange(this.selected());
  }

  indexOf(code) {
    return Math.max(0, this.codes.indexOf(code));
  }

  cardAt(i) {
    return this.el.querySelectorAll(".card")[i] || null;
  }

  cardUnder(x) {
    // Probe along the middle of the row so a drag that drifts up or down still reads the run.
    const box = this.el.getBoundingClientRect();
    const hit = document.elementFromPoint(x, box.top + box.height * 0.62);
    const card = hit && hit.closest(".card");
    return card && this.el.contains(card) ? card : null;
  }

  pointerDown(e) {
    if (e.button > 0) return;
    const card = e.target.closest(".card");
    if (!card) return;
    e.preventDefault();
    const code = card.dataset.code;
    const on = !this.chosen.has(code);
    this.drag = { on, id: e.pointerId };
    this.focus = this.indexOf(code);
    this.el.setPointerCapture?.(e.pointerId);
    this.toggle(code, on);
    card.focus({ preventScroll: true });
  }

  pointerMove(e) {
    if (!this.drag || e.pointerId !== this.drag.id) return;
    const card = this.cardUnder(e.clientX);
    if (card) this.toggle(card.dataset.code, this.drag.on);
  }

  pointerUp() {
    this.drag = null;
  }

  keyDown(e) {
    const n = this.codes.length;
    if (!n) return;
    let next = null;
    if (e.key === "ArrowRight" || e.key === "ArrowDown") next = Math.min(n - 1, this.focus + 1);
    else if (e.key === "ArrowLeft" || e.key === "ArrowUp") next = Math.max(0, this.focus - 1);
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = n - 1;
    else if (e.key === " " || e.key === "Spacebar") {
      e.preventDefault();
      this.toggle(this.codes[this.focus]);
      return;
    }
    if (next === null) return;
    e.preventDefault();
    this.focus = next;
    this.sync();
    this.cardAt(next)?.focus();
  }
}
