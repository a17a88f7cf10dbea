// The player's own hand: drawing, selection by tap, by dragging across a run, and by keyboard.
// It only tracks which card codes are selected; whether they make a play is the server's call.
// A tap may select a whole play (`smart`, smartselect.js); a drag always selects card by card.

import { cardElement, sortCodes } from "./cards.js";

// Every card keeps at least this much of itself uncovered, both ways, so a finger can hit it.
export const TAP_PX = 44;
const MAX_ROWS = 3;

/**
 * How to lay out `n` cards in `avail` px when a lone card is `natural` px wide: as few
 * rows as possible, each card showing a TAP_PX strip (cards shrink to TAP_PX first).
 */
export function handLayout(n, avail, natural) {
  for (let rows = 1; rows <= MAX_ROWS; rows += 1) {
    const perRow = Math.max(1, Math.ceil(n / rows));
    const room = perRow > 1 ? avail - (perRow - 1) * TAP_PX : avail;
    const width = Math.min(natural, room);
    if (width >= TAP_PX || rows === MAX_ROWS) {
      const w = Math.max(width, TAP_PX);
      const step = perRow > 1 ? Math.min(Math.max(natural * 0.6, TAP_PX), (avail - w) / (perRow - 1)) : w;
      return { rows: Math.ceil(n / perRow) || 1, perRow, width: w, step };
    }
  }
  return { rows: 1, perRow: n, width: natural, step: natural };
}

export class Hand {
  constructor(el, { nameOf, onChange, smart = () => null }) {
    this.el = el;
    // What a tap on a card selects instead of toggling it (null: toggle it).
    this.smart = smart;
    this.nameOf = nameOf;
    this.onChange = onChange;
    this.codes = [];
    this.chosen = new Set();
    this.focus = 0;
    this.drag = null;
    this.enabled = true;
    this.width = 0;
    // An invisible box as wide as a card would be: the size before the hand is fitted.
    this.probe = document.createElement("div");
    this.probe.className = "hand-probe";
    this.probe.setAttribute("aria-hidden", "true");
    el.append(this.probe);
    new ResizeObserver(() => {
      if (Math.abs(this.el.clientWidth - this.width) > 0.5) this.redraw();
    }).observe(el);
    el.addEventListener("pointerdown", (e) => this.pointerDown(e));
    el.addEventListener("pointermove", (e) => this.pointerMove(e));
    el.addEventListener("pointerup", () => this.pointerUp());
    el.addEventListener("pointercancel", () => {
      this.drag = null;
    });
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
    this.width = this.el.clientWidth;
    const box = getComputedStyle(this.el);
    const avail = this.width - parseFloat(box.paddingLeft) - parseFloat(box.paddingRight);
    const fit = handLayout(this.codes.length, avail, this.probe.offsetWidth || TAP_PX);
    const rows = Array.from({ length: fit.rows }, () => {
      const row = document.createElement("div");
      row.className = "hand-row";
      return row;
    });
    this.codes.forEach((code, i) => {
      const slot = document.createElement("div");
      slot.className = "slot";
      const card = cardElement(code, { name: this.nameOf(code) });
      card.setAttribute("role", "option");
      card.style.setProperty("--i", i);
      if (entering.has(code)) card.classList.add("dealt");
      slot.append(card);
      rows[Math.floor(i / fit.perRow)].append(slot);
    });
    this.el.replaceChildren(this.probe, ...rows);
    this.el.style.setProperty("--hand-w", `${fit.width}px`);
    this.el.style.setProperty("--step", `${fit.step}px`);
    this.el.classList.toggle("rows", fit.rows > 1);
    this.sync();
  }

  /** Lay the same cards out again (the space changed). */
  redraw() {
    const had = this.el.contains(document.activeElement);
    this.draw(new Set());
    if (had) this.cardAt(this.focus)?.focus({ preventScroll: true });
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
    // Probe along the height where the drag started, so a drag that drifts up or down still
    // reads the run in its own row.
    const hit = document.elementFromPoint(x, this.drag.y);
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
    // A whole play waits for the pointer to come up: moving onto another card makes it a drag.
    const play = this.smart(code, this.selected());
    this.drag = { on, id: e.pointerId, y: e.clientY, code, play };
    this.focus = this.indexOf(code);
    this.el.setPointerCapture?.(e.pointerId);
    if (play === null) this.toggle(code, on);
    card.focus({ preventScroll: true });
  }

  pointerMove(e) {
    if (!this.drag || e.pointerId !== this.drag.id) return;
    const card = this.cardUnder(e.clientX);
    if (!card) return;
    if (this.drag.play !== null) {
      if (card.dataset.code === this.drag.code) return;
      this.drag.play = null;
      this.toggle(this.drag.code, this.drag.on);
    }
    this.toggle(card.dataset.code, this.drag.on);
  }

  pointerUp() {
    if (this.drag && this.drag.play !== null) this.select(this.drag.play);
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
