// The host's seat panel: the invite and watch links this browser handed out, reissued on
// request (an `invite` frame brings the new one), and the seat actions the panel offers.

import { forgetSeatAction, sendSeatAction } from "./actions.js";
import { app, els } from "./app.js";
import { linksFrom } from "./connection.js";
import { t } from "./i18n.js";
import { toast } from "./narrate.js";
import { $ } from "./render.js";
import { renderHostPanel } from "./seats.js";
import { saveSession } from "./store.js";

// Bound once by main.js: confirm(text) answers a promise of the player's yes or no.
let confirm = null;

export function bindHostPanel(parts) {
  ({ confirm } = parts);
  // A non-modal dialog does not close on Escape by itself.
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && els.inviteSheet.open) els.inviteSheet.close();
  });
  window.addEventListener("resize", fitDrawer);
}

/** The drawer ends above our own strip (turn, clock, hand), whatever the screen. */
function fitDrawer() {
  if (!els.inviteSheet.open) return;
  const top = document.querySelector(".topbar").getBoundingClientRect().bottom + 4;
  els.inviteSheet.style.top = `${Math.round(top)}px`;
  const room = document.querySelector("#me").getBoundingClientRect().top - top - 6;
  els.inviteSheet.style.setProperty("--drawer-h", `${Math.max(120, Math.round(room))}px`);
}

export function onInvite(msg) {
  forgetSeatAction();
  // A new link from a host action: the old one stopped working at once.
  if (!app.session || app.session.watch) return;
  if (msg.kind === "watch") app.session.watch_link = msg.invite;
  else app.session.invites = [...(app.session.invites || []).filter((i) => i.seat !== msg.seat), { seat: msg.seat, invite: msg.invite }];
  saveSession(app.session);
  app.links = linksFrom(app.session);
  toast(t("host.linkReady"));
  if (els.inviteSheet.open) drawHostPanel();
}

async function copyLink(input, url) {
  input.select();
  try {
    await navigator.clipboard.writeText(url);
  } catch {
    document.execCommand?.("copy");
  }
  toast(t("invite.copied"));
}

export function drawHostPanel() {
  if (!app.view || !app.table) return;
  renderHostPanel($("#invite-list"), {
    table: app.table,
    view: app.view,
    links: app.links || linksFrom(app.session),
    send: sendSeatAction,
    confirm,
    copy: copyLink,
  });
  fitDrawer();
}

export function openInvites() {
  drawHostPanel();
  // Non-modal (issue 28, defect 11): the table goes on underneath and stays playable.
  if (!els.inviteSheet.open) els.inviteSheet.show();
  fitDrawer();
}
