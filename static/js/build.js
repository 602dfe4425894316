// Which client this page runs, and reloading it once its server runs another
// (app/api/client.py). The page loads its modules from /b/<build>/js/, so the
// build is in this module's own address. The server says its build in every
// HTTP answer (X-Build) and in a room socket's first message; when the two
// differ the tab reloads - never in the middle of something: a room page
// waits until it is not your turn, no move is on its way and no dialog or
// text field is in use; any other page waits until you go to another page.

export const BUILD = (import.meta.url.match(/\/b\/([^/]+)\/js\//) || [])[1] || null;

// A reload that still brought this build (during a rolling upgrade the page
// may come from a process not yet upgraded) is not tried again for a while:
// never a loop of reloads.
const AGAIN_AFTER_MS = 60_000;
const KEY = "cardroom:reloaded";

let wanted = null; // the server's build, when it is not ours
let calmCheck = null; // the room page's own test of a calm moment, while it is open
let timer = null;

/** A field being typed in or a dialog open: reloading would lose it. */
function busyPage() {
  if (document.querySelector("dialog[open]")) return true;
  const el = document.activeElement;
  if (!el || el === document.body) return false;
  if (el.matches("textarea, select, [contenteditable]")) return true;
  return el.matches("input") && !["button", "submit", "checkbox", "radio", "range"].includes(el.type) && el.value !== "";
}

/** Did this tab reload for `build` a moment ago, and still run another? */
function triedLately(build) {
  try {
    const last = JSON.parse(sessionStorage.getItem(KEY));
    return last && last.to === build && Date.now() - last.at < AGAIN_AFTER_MS;
  } catch {
    return false;
  }
}

/** Has the server told us it runs another client? */
export const stale = () => wanted !== null;

/** The server runs `build` (from a header or a socket's welcome). */
export function serverBuild(build) {
  if (!BUILD || !build || build === BUILD || wanted === build) return;
  wanted = build;
  document.body.dataset.staleBuild = build; // for tests and styling
  reloadWhenCalm();
}

/** While a room page is open, `check()` says whether now is a calm moment
 * there; null when it closes (other pages reload on navigation only). */
export function setCalmCheck(check) {
  calmCheck = check;
  reloadWhenCalm();
}

/** Reload now if calm, else look again every second (and after each change:
 * the room page calls this when a view comes). */
export function reloadWhenCalm() {
  clearTimeout(timer);
  if (!wanted || !calmCheck) return;
  if (!busyPage() && calmCheck()) {
    if (!reloadNow()) timer = setTimeout(reloadWhenCalm, AGAIN_AFTER_MS);
    return;
  }
  timer = setTimeout(reloadWhenCalm, 1000);
}

/** Load the server's client now (the caller knows the moment is calm); false
 * when that was tried a moment ago and brought this build again. */
export function reloadNow() {
  if (!wanted || triedLately(wanted)) return false;
  try {
    sessionStorage.setItem(KEY, JSON.stringify({ to: wanted, at: Date.now() }));
  } catch {
    /* no storage: reload anyway */
  }
  location.reload();
  return true;
}
