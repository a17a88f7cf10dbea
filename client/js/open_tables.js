// The lobby's list of tables opened for people, live from the lobby's event stream
// (`/api/lobby/events`, docs/protocol.md "Players and the lobby"), each row with a
// Join for its code.

import { redraw } from "./render.js";
import { t } from "./i18n.js";

// How long after a release its click may come (a touch's follows the lift as a tap
// gesture); with no click by then (a drag, a cancelled press) a held list is drawn.
const CLICK_GRACE_MS = 300;

/** The list drawn into `list` (`empty` shown while there is no table), each row's Join
 * calling `join(code)`.  `watch()` follows the stream while the lobby is open,
 * `unwatch()` stops. */
export function openTables(list, empty, join) {
  let events = null;
  // A list that comes while a finger is down on the list waits for the finger to lift:
  // a table opened above (newest first) or gone would slide the rows under it, and the
  // release would land on another table's Join, or on none.
  let held = null;
  let pressing = false;

  function show(tables) {
    if (pressing) {
      held = tables;
      return;
    }
    // Every table opened or filled anywhere redraws the list: the rows that stay the
    // same stay the same nodes.
    redraw(list, ...tables.map(row));
    empty.hidden = tables.length > 0;
  }

  function row(table) {
    const li = document.createElement("li");
    const what = document.createElement("span");
    what.className = "what";
    const name = document.createElement("strong");
    name.textContent = t(`preset.${table.rules}.name`);
    const facts = document.createElement("small");
    const bots = table.bots ? table.bots.split(",").map((l) => t(`level.${l}`)).join(", ") : t("lobby.noBots");
    facts.textContent = t("lobby.facts", { deals: table.deals, n: table.free, bots });
    what.append(name, facts);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "btn";
    button.textContent = t("lobby.join");
    button.dataset.code = table.code;
    button.addEventListener("click", () => join(table.code));
    li.append(what, button);
    return li;
  }

  list.addEventListener("pointerdown", () => {
    pressing = true;
  });
  const drawHeld = () => {
    const tables = held;
    held = null;
    if (tables) show(tables);
  };
  const lift = () => {
    if (!pressing) return;
    pressing = false;
    const late = setTimeout(drawHeld, CLICK_GRACE_MS);
    // After the release's click has reached the row it was pressed on.
    const clicked = () => {
      clearTimeout(late);
      setTimeout(drawHeld);
    };
    window.addEventListener("click", clicked, { once: true, capture: true });
  };
  window.addEventListener("pointerup", lift);
  window.addEventListener("pointercancel", lift);

  return {
    watch() {
      if (events) return;
      events = new EventSource("/api/lobby/events");
      events.onmessage = (e) => show(JSON.parse(e.data).tables);
    },
    unwatch() {
      events?.close();
      events = null;
    },
  };
}
