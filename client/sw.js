// The service worker: keeps the client's own files (the shell) so the page opens without
// a network and can say that the game needs the server. It never touches the game: the
// API, the WebSocket, the lobby's event stream and anything of another origin go straight
// to the network, uncached.
//
// The server fills SHELL in when it serves this file (server/client_shell.py): every
// file of the client and a digest of them all. A changed client is a changed script, so
// the browser installs the new worker; it caches the new shell under its own version,
// takes over, and deletes every older cache. The page is never reloaded under the
// player: the next load is the new client's.

const SHELL = "__PDK_SHELL__";
const PREFIX = "pdk-shell-";
const CACHE = PREFIX + SHELL.version;

// Paths the worker leaves to the network (and never caches): the game itself.
const LIVE = [/^\/api\//, /^\/ws$/, /^\/healthz$/, /^\/metrics$/, /^\/sw\.js$/];

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // `reload`: straight from the server, never an older copy from the HTTP cache.
      await cache.addAll(SHELL.files.map((f) => new Request(f, { cache: "reload" })));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (LIVE.some((re) => re.test(url.pathname))) return;
  if (request.headers.get("accept")?.includes("text/event-stream")) return;
  event.respondWith(fromNetworkElseShell(request, url));
});

// The network first while the server answers (a player always gets the server's current
// client); the cached shell when it does not. `no-cache`: asked of the server every time
// (a 304 when unchanged), never a copy the HTTP cache still deems fresh, which offline
// would hide the shell and online could mix an old file into a new client.
async function fromNetworkElseShell(request, url) {
  const fresh =
    request.mode === "navigate"
      ? new Request(url.href, { cache: "no-cache", credentials: "same-origin" })
      : new Request(request, { cache: "no-cache" });
  try {
    return await fetch(fresh);
  } catch (err) {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(request, { ignoreSearch: true });
    if (hit) return hit;
    // Any page address (an invite link's `/#...` never reaches here, `/?x` may) opens the shell.
    if (request.mode === "navigate") {
      const page = await cache.match("./");
      if (page) return page;
    }
    throw err;
  }
}

// A turn notification shown through the worker (where a page may not show one itself):
// a click brings the game's tab back, or opens it.
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(
    (async () => {
      const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      if (tabs.length) return tabs[0].focus();
      return self.clients.openWindow("./");
    })(),
  );
});
