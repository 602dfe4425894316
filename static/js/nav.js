// Moving between pages without reloading: main.js listens for the event.
export function go(url) {
  history.pushState(null, "", url);
  window.dispatchEvent(new Event("cardroom:navigate"));
}
