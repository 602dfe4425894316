// Entry point: picks the page from the address. /r/{code} is a room (the
// invite link); "#history" and "#game/{id}" are the history pages, "#me",
// "#person/{id}", "#versus/{a}/{b}", "#evening/{code}", "#sheets/{code}" and
// "#replay" the records pages (records.js); anything
// else is the home page (create or join a room).
import { $ } from "./dom.js";
import { showHome } from "./lobby.js";
import { showRoom } from "./room.js";
import { showHistory, showGame } from "./history.js";
import { showAccount } from "./account.js";
import { showPerson, showVersus, showEvening, showSheets, showLoadReplay } from "./records.js";
import { api } from "./api.js";
import { showRules } from "./rules.js";
import { go } from "./nav.js";
import { stale, reloadNow } from "./build.js";
import { alertsOn, registerWorker, subscribePush } from "./nudge.js";

let current = null; // the page's cleanup function

function route() {
  // the server runs a newer client: going to another page is a calm moment
  // to load it (build.js)
  if (stale() && reloadNow()) return;
  if (current) {
    try {
      current();
    } catch {
      /* a page that fails to clean up must not block the next one */
    }
    current = null;
  }
  const app = $("#app");
  const room = location.pathname.match(/^\/r\/([^/]+)\/?$/);
  const hash = location.hash.replace(/^#\/?/, "");
  let cleanup;
  if (room) {
    cleanup = showRoom(app, decodeURIComponent(room[1]));
  } else if (hash === "history") {
    cleanup = showHistory(app);
  } else if (hash === "rules" || hash.startsWith("rules/")) {
    cleanup = showRules(app, decodeURIComponent(hash.slice(6)));
  } else if (hash.startsWith("game/")) {
    cleanup = showGame(app, decodeURIComponent(hash.slice(5)));
  } else if (hash === "me") {
    api("/api/me/person").then((p) => showPerson(app, p.person)).catch(() => showHistory(app));
  } else if (hash.startsWith("person/")) {
    cleanup = showPerson(app, decodeURIComponent(hash.slice(7)));
  } else if (hash.startsWith("versus/")) {
    const [one, two] = hash.slice(7).split("/").map(decodeURIComponent);
    cleanup = showVersus(app, one, two);
  } else if (hash.startsWith("evening/")) {
    cleanup = showEvening(app, decodeURIComponent(hash.slice(8)));
  } else if (hash.startsWith("sheets/")) {
    cleanup = showSheets(app, decodeURIComponent(hash.slice(7)));
  } else if (hash === "replay") {
    cleanup = showLoadReplay(app);
  } else {
    cleanup = showHome(app);
  }
  current = typeof cleanup === "function" ? cleanup : null;
  window.scrollTo(0, 0);
}

window.addEventListener("popstate", route);
window.addEventListener("cardroom:navigate", route);
window.addEventListener("hashchange", route);
document.addEventListener("click", (e) => {
  const a = e.target.closest && e.target.closest("a[data-nav]");
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  go(a.getAttribute("href"));
});

showAccount($("#nav-account"));
route();
// the service worker makes the card room installable; with turn alerts on,
// the push subscription is told again whose browser this is now
registerWorker().then(() => (alertsOn() ? subscribePush() : null)).catch(() => {});
