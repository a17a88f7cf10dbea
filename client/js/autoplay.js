// 托管 (autoplay): the seat's own switch that hands its turns to the server's stand-in
// bot and takes them back.  The server keeps the state (`table.seats[i].on_auto`, shown to
// everyone as "Auto"); this module only draws the switch from it and says what a tap asks.

import { t } from "./i18n.js";
import { seatInfo } from "./render.js";

/** Whether the stand-in plays every turn of `seat` until its human takes it back. */
export const onAuto = (table, seat) => Boolean(seatInfo(table, seat).on_auto);

/** Draw the switch for our seat (none for a spectator): pressed while we are on auto. */
export function renderAutoButton(el, { table, view }) {
  el.hidden = Boolean(view.watching);
  const on = !view.watching && onAuto(table, view.seat);
  el.setAttribute("aria-pressed", String(on));
  el.classList.toggle("on", on);
  const label = t(on ? "autoplay.stop" : "autoplay.start");
  el.title = label;
  el.setAttribute("aria-label", label);
}

/** The seat action a tap on the switch asks for: the other state than the table shows. */
export const autoRequest = (table, view) => ({ type: "auto", on: !onAuto(table, view.seat) });
