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
}

export function openInvites() {
  drawHostPanel();
  els.inviteSheet.showModal();
}
