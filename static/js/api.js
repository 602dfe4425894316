// HTTP calls to the server, and what this browser remembers (seat tokens per
// room, the display name). Errors come back as Error objects whose message is
// the server's own explanation, ready to show to the player.
import { serverBuild } from "./build.js";

export class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function explain(body, status) {
  if (!body) return `The server answered ${status}.`;
  const e = body.error ?? body.detail ?? body;
  if (typeof e === "string") return e;
  if (e && typeof e.message === "string") return e.message;
  if (Array.isArray(e)) {
    return e.map((x) => (x.loc ? `${x.loc.slice(1).join(".")}: ${x.msg}` : x.msg || String(x))).join("; ");
  }
  return `The server answered ${status}.`;
}

export async function api(path, { method = "GET", body } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: body !== undefined ? { "Content-Type": "application/json" } : {},
      body: body !== undefined ? JSON.stringify(body) : undefined,
      credentials: "same-origin",
    });
  } catch {
    throw new ApiError("Cannot reach the server. Check your connection and try again.", 0);
  }
  serverBuild(res.headers.get("X-Build"));
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok) {
    const code = data && (data.error?.code || data.detail?.code);
    const msg = explain(data, res.status);
    throw new ApiError(msg.charAt(0).toUpperCase() + msg.slice(1), res.status, code);
  }
  return data;
}

// ---- what this browser remembers ----

const KEY = "cardroom:";

function load(key, fallback) {
  try {
    const v = localStorage.getItem(KEY + key);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

function save(key, value) {
  try {
    if (value === null || value === undefined) localStorage.removeItem(KEY + key);
    else localStorage.setItem(KEY + key, JSON.stringify(value));
  } catch {
    /* private mode: the seat lasts as long as the tab */
  }
}

/** {token, seat, name} for a room code, as given by create/join. */
export const seatFor = (code) => load(`room:${code.toUpperCase()}`, null);
export const rememberSeat = (code, info) => save(`room:${code.toUpperCase()}`, info);
export const forgetSeat = (code) => save(`room:${code.toUpperCase()}`, null);

/** Places this browser gave to another device ("Continue on another
 * device"): [{code, name, at}], newest last, so its pages can say where its
 * person went instead of "a room you were not in". */
export const movedAway = () => load("moved", []);
export function rememberMove(code, name) {
  const list = movedAway().filter((m) => m.code !== code);
  list.push({ code, name: name || "", at: new Date().toISOString() });
  save("moved", list.slice(-20));
}

/** One sentence about the places that moved away, or null. */
export function movedNote() {
  const list = movedAway();
  if (!list.length) return null;
  const last = list[list.length - 1];
  const when = new Date(last.at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  const rooms = list.map((m) => m.code).join(", ");
  return `Your place in room ${rooms} moved to another device (last on ${when}); ` +
    "the games played there, your records and turn alerts went with it, unless you were signed in. " +
    "Open My games on that device to see them.";
}

export const savedName = () => load("name", "");
export const rememberName = (name) => save("name", name);

export const pref = (name, fallback) => load(`pref:${name}`, fallback);
export const setPref = (name, value) => save(`pref:${name}`, value);

/** Room codes are short; accept a pasted invite link too. */
export function codeFromInput(text) {
  const t = (text || "").trim();
  const m = t.match(/\/r\/([A-Za-z0-9_-]+)/);
  return (m ? m[1] : t).replace(/[\s-]+/g, "").toUpperCase();
}

let publicBase = null;
let siteLoaded = null;

/** The server's PUBLIC_URL (GET /api/health), once per page: invite links use it. */
export function loadSite() {
  siteLoaded ||= api("/api/health").then((r) => {
    publicBase = r.public_url || null;
  }).catch(() => {});
  return siteLoaded;
}

export const inviteLink = (code) => `${publicBase || location.origin}/r/${code}`;

/** Does this link only work on the machine it was made on? */
export function isLocalLink(link) {
  try {
    const host = new URL(link).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host.endsWith(".localhost") || host === "::1" || host === "0.0.0.0" || /^127\./.test(host);
  } catch {
    return false;
  }
}
