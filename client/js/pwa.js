// Installable: registers the service worker (sw.js: the shell cached for a visit without
// a network), and the "the game needs the server" panel shown over the empty table while
// the server cannot be reached and no game is on screen.

import { els } from "./app.js";

/** Register sw.js; the browser asks the server for a new one on every load. */
export function registerWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("sw.js", { updateViaCache: "none" }).catch(() => {
    // No worker (a private window, storage off): the page works as before, online only.
  });
}

/** Show the panel while nothing can be played: offline before any table was shown. */
export function showNeedsServer(netState, hasView) {
  const panel = els.needsServer;
  if (!panel) return;
  if (netState === "online" || hasView) panel.hidden = true;
  else if (netState === "offline") panel.hidden = false;
}
