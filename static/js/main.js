// Entry point: picks the page from the address. /r/{code} is a room (the
// invite link); "#history" and "#game/{id}" are the history pages; anything
// else is the home page (create or join a room).
import { $ } from "./dom.js";
import { showHome } from "./lobby.js";
import { showRoom } from "./room.js";
import { showHistory, showGame } from "./history.js";
import { showAccount } from "./account.js";
import { showRules } from "./rules.js";
import { go } from "./nav.js";

let current = null; // the page's cleanup function

function route() {
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
