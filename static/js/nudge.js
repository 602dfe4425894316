// Turn alerts: being told it is your turn when you are not looking.
//
// Off until the person turns them on (a click: browsers ask for the
// permission only then, and people say no to a page that asks unprompted).
// Once on, two ways, never both for one turn:
// - the room page is open but hidden (another tab, a phone's screen off):
//   the page itself shows a notification, once per turn (TurnNudge);
// - no page is open, or its socket dropped: the server sends a Web Push
//   message (app/rooms/nudges.py), which the service worker (/sw.js) shows.
// Both carry the room's tag, so a turn announced by the page and then pushed
// after its socket dropped rings once (static/sw.js). Neither says anything
// about the cards: "Your turn in Big Two at Ann's table".
//
// Notifications need a secure context (HTTPS, or localhost on this very
// computer): over plain HTTP the switch says why they are off instead.
import { h, toast } from "./dom.js";
import { api, pref, setPref } from "./api.js";
import { askedText } from "./cue.js";

const WORKER = "/sw.js";

/** Why turn alerts cannot be on here; null when they can. */
export function whyOff() {
  if (!window.isSecureContext) {
    return `Turn alerts are off: browsers allow notifications only on a secure address (HTTPS, or localhost on the computer running the card room), and this page is ${location.origin}. Whoever runs the card room can serve it over HTTPS (the compose's Caddy does, given a DOMAIN).`;
  }
  if (!("Notification" in window)) return "Turn alerts are off: this browser has no notifications.";
  if (Notification.permission === "denied") {
    return "Turn alerts are off: notifications for this site are blocked in the browser's settings.";
  }
  return null;
}

export const alertsOn = () => !whyOff() && pref("nudges", "off") === "on" && Notification.permission === "granted";

/** The service worker: registered on every page in a secure context, so the
 * card room can be installed (it caches nothing: static/sw.js). */
export function registerWorker() {
  if (!window.isSecureContext || !("serviceWorker" in navigator)) return Promise.resolve(null);
  return navigator.serviceWorker.register(WORKER).catch(() => null);
}

function keyBytes(b64) {
  const s = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

function sameKey(a, b) {
  if (!a || a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a);
  return x.every((v, i) => v === b[i]);
}

/** Subscribe this browser to Web Push and tell the server whose it is (again
 * on every load: whoever uses the browser now gets a subscription of their
 * own; the server never hands one person's to another).
 * False when this browser cannot (no push service, e.g. headless). */
export async function subscribePush() {
  const reg = await registerWorker();
  if (!reg || !("PushManager" in window)) return false;
  await navigator.serviceWorker.ready;
  const { public_key: key } = await api("/api/push");
  const want = keyBytes(key);
  let sub = await reg.pushManager.getSubscription();
  if (sub && !sameKey(sub.options?.applicationServerKey, want)) {
    await sub.unsubscribe(); // made for another server key: useless now
    sub = null;
  }
  try {
    sub ||= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: want });
  } catch {
    return false;
  }
  try {
    await api("/api/me/push", { method: "PUT", body: sub.toJSON() });
  } catch (err) {
    if (err.code !== "endpoint_taken") throw err;
    // made for someone who used this browser before: theirs stays theirs, and
    // a new subscription (a new endpoint) is this person's
    await sub.unsubscribe();
    sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: want });
    await api("/api/me/push", { method: "PUT", body: sub.toJSON() });
  }
  return true;
}

async function turnOn() {
  const permission = await Notification.requestPermission();
  if (permission !== "granted") throw new Error(whyOff() || "Turn alerts need the browser's permission.");
  setPref("nudges", "on");
  const pushed = await subscribePush().catch(() => false);
  return pushed
    ? "Turn alerts are on: you will be told when it is your turn, even with the room closed."
    : "Turn alerts are on while the room is open in a tab; this browser cannot be told with the room closed.";
}

async function turnOff() {
  setPref("nudges", "off");
  const reg = "serviceWorker" in navigator ? await navigator.serviceWorker.getRegistration() : null;
  const sub = reg && (await reg.pushManager?.getSubscription());
  if (sub) {
    await api("/api/me/push", { method: "DELETE", body: { endpoint: sub.endpoint } }).catch(() => {});
    await sub.unsubscribe().catch(() => {});
  }
}

/** The switch, with what it does or why it cannot: for the room's lobby and
 * its Seats panel. */
export function alertsSwitch() {
  const box = h("div.nudges", { dataset: { key: "nudges" } });
  const draw = (message) => {
    const why = whyOff();
    const on = alertsOn();
    box.replaceChildren(...[
      h("h3", "Turn alerts"),
      why
        ? h("p.muted.nudges-off", { role: "note" }, why)
        : h("button.small", {
          type: "button",
          "aria-pressed": String(on),
          onclick: async () => {
            try {
              draw(on ? (await turnOff(), "Turn alerts are off.") : await turnOn());
            } catch (err) {
              toast(err.message, "error");
              draw();
            }
          },
        }, on ? "Turn alerts on: switch off" : "Tell me when it is my turn"),
      message ? h("p.muted", { role: "status" }, message) : null,
    ].filter(Boolean));
  };
  draw();
  return box;
}

/** What a turn alert says: the game and whose table, never a card (the same
 * words as the server's push, app/rooms/nudges.py). */
export function alertText(view) {
  const game = view.room.title || view.room.game;
  const host = view.room.seats.find((s) => s && s.host);
  if (view.you.host) return `Your turn in ${game} at your table`;
  return host ? `Your turn in ${game} at ${host.name}'s table` : `Your turn in ${game}`;
}

/** The page's own alert while it is hidden: once per turn (a turn starts
 * when this seat is asked something after not being asked). */
export class TurnNudge {
  constructor(code) {
    this.code = code;
    this.tag = `turn:${code}`;
    this.turn = 0;
    this.told = 0;
    this.asked = false;
    this.view = null;
  }

  update(view) {
    this.view = view;
    const asked = !!askedText(view);
    if (asked && !this.asked) this.turn += 1;
    this.asked = asked;
    this.maybeTell();
  }

  /** On visibilitychange: hidden in my turn tells; looked at clears. */
  visibility() {
    if (document.visibilityState === "visible") this.clear();
    else this.maybeTell();
  }

  maybeTell() {
    if (!this.asked || this.told === this.turn || document.visibilityState !== "hidden" || !alertsOn()) return;
    this.told = this.turn;
    const text = alertText(this.view);
    const options = { body: text, tag: this.tag, icon: "/icons/icon-192.png", data: { url: `/r/${this.code}` } };
    // A phone allows notifications only through the service worker; a
    // browser without one (some private windows) shows it from the page.
    const fromPage = () => {
      const n = new Notification("Card room", options);
      n.onclick = () => window.focus();
    };
    const refused = (err) => { document.body.dataset.nudgeError = String(err?.message || err); };
    // how far the last alert got, for a test that waits for it in vain
    const step = (where) => { document.body.dataset.nudgeStep = where; };
    const show = async () => {
      step("finding the worker");
      const reg = navigator.serviceWorker ? await navigator.serviceWorker.getRegistration() : null;
      if (!reg) {
        step("from the page");
        return fromPage();
      }
      step("asking the worker");
      // a worker not active yet, or being replaced: the page's own still tells
      return reg.showNotification("Card room", options)
        .then(() => step("shown"), (err) => { refused(err); step("from the page"); fromPage(); });
    };
    show().catch(refused);
    document.body.dataset.nudged = String(Number(document.body.dataset.nudged || 0) + 1);
  }

  clear() {
    navigator.serviceWorker?.getRegistration().then((reg) => reg?.getNotifications({ tag: this.tag }))
      .then((list) => (list || []).forEach((n) => n.close())).catch(() => {});
  }
}
