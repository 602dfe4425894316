// The card room's service worker: it shows the turn nudges the server sends
// over Web Push (app/rooms/nudges.py) and opens the room when one is tapped.
// It caches nothing and answers no fetch: every file still comes from the
// server as the static mount serves it, so the card room works exactly as it
// does without it (and is installable: see manifest.webmanifest).
//
// A nudge's data is JSON: {title, body, url, tag}. The tag is the room's, so
// a newer nudge for a room replaces the older one instead of piling up, and
// the page's own notification for a hidden tab (static/js/nudge.js) uses the
// same tag: one notification per room however it came. A replacement does not
// alert again (no `renotify`): a turn the page already announced, then pushed
// after its socket dropped, rings once. The page closes its room's
// notifications when it is looked at, so the next turn's rings afresh.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = {};
  }
  const title = typeof data.title === "string" ? data.title : "Card room";
  const body = typeof data.body === "string" ? data.body : "Your turn";
  const url = typeof data.url === "string" && data.url.startsWith("/") ? data.url : "/";
  event.waitUntil(
    self.registration.showNotification(title, {
      body,
      tag: typeof data.tag === "string" ? data.tag : "turn",
      icon: "/icons/icon-192.png",
      badge: "/icons/icon-192.png",
      data: { url },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || "/", self.location.origin).href;
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    for (const client of open) {
      if (client.url === url && "focus" in client) return client.focus();
    }
    return self.clients.openWindow(url);
  })());
});
