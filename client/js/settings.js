// The settings sheet.  Display options and bot speed apply at once; table options (rules,
// match length, players, bot levels) are staged and only take effect by opening a new
// table, after a confirmation, since the server fixes them when the table is created.

import { LANGUAGES, t } from "./i18n.js";
import { checkName } from "./names.js";
import { $, h, redraw } from "./render.js";

export const PRESETS = ["classic", "sixteen", "kawu"];
export const DEAL_CHOICES = [1, 5, 10];
export const LEVELS = ["easy", "normal", "strong"];
export const SPEEDS = [
  ["fast", 250],
  ["normal", 800],
  ["slow", 1600],
];

export const CLOCK_CHOICES = [0, 15, 30, 60];

const TABLE_KEYS = ["rules", "deals", "humans", "bots", "turnSeconds"];

export class SettingsSheet {
  constructor({ dialog, settings, onDisplay, onSpeed, onNewTable, onName, confirm }) {
    Object.assign(this, { dialog, settings, onDisplay, onSpeed, onNewTable, onName, confirm });
    const nameInput = $("#name-input", dialog);
    nameInput.addEventListener("change", (e) => this.setName(e.target.value));
    // Enter takes the name without closing the sheet (the form would submit).
    nameInput.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      this.setName(nameInput.value);
    });
    this.staged = pickTable(settings);
    this.currentSpeed = settings.botSpeed;
    $("#btn-apply-table", dialog).addEventListener("click", () => this.applyTable());
    $("#lang-select", dialog).addEventListener("change", (e) => this.setDisplay({ lang: e.target.value }));
    $("#sort-select", dialog).addEventListener("change", (e) => this.setDisplay({ sort: e.target.value }));
    $("#opt-four", dialog).addEventListener("change", (e) => this.setDisplay({ fourColour: e.target.checked }));
    $("#opt-counter", dialog).addEventListener("change", (e) => this.setDisplay({ counter: e.target.checked }));
    $("#opt-sound", dialog).addEventListener("change", (e) => this.setDisplay({ sound: e.target.checked }));
    $("#opt-autopass", dialog).addEventListener("change", (e) => this.setDisplay({ autoPass: e.target.checked }));
    $("#opt-smart", dialog).addEventListener("change", (e) => this.setDisplay({ smartSelect: e.target.checked }));
    $("#card-size-select", dialog).addEventListener("change", (e) => this.setDisplay({ cardSize: e.target.value }));
    $("#opt-contrast", dialog).addEventListener("change", (e) => this.setDisplay({ highContrast: e.target.checked }));
    $("#callout-select", dialog).addEventListener("change", (e) => this.setDisplay({ callouts: e.target.value }));
  }

  open() {
    this.staged = pickTable(this.settings);
    this.render();
    this.dialog.showModal();
  }

  /** The table we sit at now changed (new table, or the server reported a speed). */
  sync(settings, speedMs) {
    this.settings = settings;
    if (speedMs !== undefined) this.currentSpeed = speedMs;
    // Every state comes through here: the choices go through `redraw`, which leaves the
    // control under a finger in place when nothing it shows has changed.
    if (this.dialog.open) this.render();
  }

  /** Check a typed name; a good one is kept and sent, a bad one explained in place. */
  setName(raw) {
    const { name, why } = checkName(raw);
    $("#name-why", this.dialog).textContent = why ? t(`name.${why}`) : "";
    $("#name-input", this.dialog).setAttribute("aria-invalid", String(Boolean(why)));
    if (name) this.onName(name);
  }

  /** The server refused the name we sent: its reason, under the field. */
  nameRefused(message) {
    $("#name-why", this.dialog).textContent = t("name.refused", { message });
    $("#name-input", this.dialog).setAttribute("aria-invalid", "true");
  }

  setDisplay(patch) {
    this.onDisplay(patch);
  }

  render() {
    const s = this.settings;
    const st = this.staged;
    const d = this.dialog;
    // The choices are drawn anew; a keyboard user walking them with the arrow keys keeps
    // their place on the new node of the choice they were on.
    const was = d.contains(document.activeElement) && document.activeElement.type === "radio" ? document.activeElement : null;
    redraw(
      $("#preset-choices", d),
      ...PRESETS.map((p) =>
        h(
          "label",
          { class: "choice" },
          h("input", { type: "radio", name: "preset", value: p, checked: st.rules === p, onchange: () => this.stage({ rules: p }) }),
          h("span", { class: "choice-text" }, h("b", { text: t(`preset.${p}.name`) }), h("small", { text: t(`preset.${p}.summary`) })),
        ),
      ),
    );
    redraw(
      $("#deal-choices", d),
      ...DEAL_CHOICES.map((n) =>
        segment("deals", String(n), st.deals === n, t("settings.nDeals", { n }), () => this.stage({ deals: n })),
      ),
    );
    redraw(
      $("#human-choices", d),
      ...[1, 2, 3].map((n) => segment("humans", String(n), st.humans === n, t(`settings.humans${n}`), () => this.stage({ humans: n }))),
    );
    const botRows = [];
    const botNames = ["Anna", "Ben"];
    for (let i = 0; i < 3 - st.humans; i += 1) {
      // Humans take the first seats and bots the rest: seat 1 is Anna, seat 2 is Ben.
      const name = botNames[st.humans + i - 1];
      botRows.push(
        h(
          "div",
          { class: "bot-row" },
          h("span", { class: "bot-name", text: t("settings.botLevel", { name }) }),
          h("div", { class: "seg" }, LEVELS.map((lv) => segment(`bot${i}`, lv, st.bots[i] === lv, t(`level.${lv}`), () => {
            // The staged choices when tapped: a row left in place may outlive this draw.
            const bots = [...this.staged.bots];
            bots[i] = lv;
            this.stage({ bots });
          }))),
        ),
      );
    }
    redraw($("#bot-levels", d), ...botRows);
    // A turn clock matters only among people: alone against bots nobody waits for you.
    $("#clock-row", d).hidden = st.humans < 2;
    redraw(
      $("#clock-choices", d),
      ...CLOCK_CHOICES.map((s) =>
        segment("clock", String(s), st.turnSeconds === s, s ? t("settings.clockSeconds", { s }) : t("settings.clockOff"), () => this.stage({ turnSeconds: s })),
      ),
    );
    const changed = tableChanged(st, s);
    const apply = $("#btn-apply-table", d);
    apply.disabled = !changed;
    $("#new-table-note", d).classList.toggle("changed", changed);
    redraw(
      $("#speed-choices", d),
      ...SPEEDS.map(([key, ms]) => segment("speed", key, nearestSpeed(this.currentSpeed) === ms, t(`speed.${key}`), () => this.onSpeed(ms))),
    );
    if (was && !was.isConnected) $(`input[name="${CSS.escape(was.name)}"][value="${CSS.escape(was.value)}"]`, d)?.focus();
    const input = $("#name-input", d);
    if (document.activeElement !== input && input.getAttribute("aria-invalid") !== "true") input.value = s.name || "";
    $("#lang-select", d).value = LANGUAGES.includes(s.lang) ? s.lang : document.documentElement.lang;
    $("#sort-select", d).value = s.sort;
    $("#opt-four", d).checked = s.fourColour;
    $("#opt-counter", d).checked = s.counter;
    $("#opt-sound", d).checked = s.sound;
    $("#opt-autopass", d).checked = s.autoPass;
    $("#opt-smart", d).checked = s.smartSelect !== false;
    $("#card-size-select", d).value = s.cardSize === "large" ? "large" : "normal";
    $("#opt-contrast", d).checked = s.highContrast === true;
    $("#callout-select", d).value = s.callouts === "sounds" ? "sounds" : "voice";
  }

  stage(patch) {
    Object.assign(this.staged, patch);
    this.render();
  }

  async applyTable() {
    if (!tableChanged(this.staged, this.settings)) return;
    const ok = await this.confirm(t("settings.confirmNewTable"));
    if (!ok) return;
    this.dialog.close();
    this.onNewTable({ ...this.staged, bots: [...this.staged.bots] });
  }
}

function segment(group, value, on, label, onPick) {
  const id = `seg-${group}-${value}`;
  return h(
    "span",
    { class: "seg-item" },
    h("input", { type: "radio", id, name: group, value, checked: on, onchange: onPick }),
    h("label", { for: id, text: label }),
  );
}

function pickTable(s) {
  return { rules: s.rules, deals: s.deals, humans: s.humans, bots: [...s.bots], turnSeconds: s.turnSeconds };
}

function tableChanged(a, b) {
  // The clock is only a table option when people share it.
  const keys = a.humans > 1 ? TABLE_KEYS : TABLE_KEYS.filter((k) => k !== "turnSeconds");
  return keys.some((k) => JSON.stringify(k === "bots" ? a.bots.slice(0, 3 - a.humans) : a[k]) !== JSON.stringify(k === "bots" ? b.bots.slice(0, 3 - b.humans) : b[k]));
}

export function nearestSpeed(ms) {
  let best = SPEEDS[0][1];
  for (const [, v] of SPEEDS) if (Math.abs(v - ms) < Math.abs(best - ms)) best = v;
  return best;
}
