// What the parts of the page share: the elements they draw into, and `app`, what the
// server last told us plus the seat we hold.  main.js draws from a state message;
// connection.js, actions.js, host.js and keyboard.js read and update the same `app`.

import { t } from "./i18n.js";
import { $ } from "./render.js";
import { loadSettings } from "./store.js";

export const els = {
  app: $("#app"),
  dealInfo: $("#deal-info"),
  net: $("#net"),
  netText: $("#net-text"),
  table: $("#table"),
  seatLeft: $("#seat-left"),
  seatRight: $("#seat-right"),
  piles: { left: $("#pile-left"), right: $("#pile-right"), me: $("#pile-me") },
  counter: $("#counter"),
  meInfo: $("#me-info"),
  status: $("#status"),
  controls: $("#controls"),
  afterDeal: $("#after-deal"),
  play: $("#btn-play"),
  pass: $("#btn-pass"),
  passWhy: $("#pass-why"),
  hint: $("#btn-hint"),
  clear: $("#btn-clear"),
  showResult: $("#btn-show-result"),
  continue: $("#btn-continue"),
  hand: $("#hand"),
  toast: $("#toast"),
  announcer: $("#announcer"),
  resultSheet: $("#result-sheet"),
  resultBody: $("#result-body"),
  settingsSheet: $("#settings-sheet"),
  confirmSheet: $("#confirm-sheet"),
  inviteSheet: $("#invite-sheet"),
  autoBanner: $("#auto-banner"),
  watchers: $("#watchers"),
  emoteButton: $("#btn-emote"),
  emotePicker: $("#emote-picker"),
  rulesSheet: $("#rules-sheet"),
  historySheet: $("#history-sheet"),
  linkSheet: $("#link-sheet"),
  needsServer: $("#needs-server"),
};

export const app = {
  settings: loadSettings(),
  session: null,
  conn: null,
  version: null,
  view: null,
  table: null,
  dealKey: null,
  resultShownFor: null,
  hintLabel: "",
  net: { state: "connecting" },
  // A play or pass sent and not yet answered: {version, shown}.
  pending: null,
  links: null,
};

/** A refusal's reason code in the player's language (the server's text if we have none). */
export function reasonText(code, fallback) {
  const key = `reason.${code}`;
  const text = t(key);
  if (text !== key) return text;
  return fallback ? t("reason.other", { message: fallback }) : t("reason.unknown");
}
