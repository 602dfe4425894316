// The room's WebSocket: its first message carries the seat token (never the
// URL, which servers log), it reconnects by itself with backoff and jitter,
// honouring a refusal's retry_after and giving up after a while (resuming with
// since=v in incarnation inc, so nothing is missed), notices version gaps and asks for a fresh
// view, and matches replies to requests by id.

import { BUILD, serverBuild } from "./build.js";

// Reconnecting: the wait doubles from FIRST_MS up to LAST_MS, each drawn at
// random between half and all of it (jitter: pages that lost one server do
// not all come back at the same instant), and never shorter than a refusal's
// retry_after. After GIVE_UP tries in a row without a view the page stops
// and says so, with a button to try again (a page left open must not spend
// the room's lookups for ever).
export const BACKOFF = { FIRST_MS: 500, LAST_MS: 20000, GIVE_UP: 8 };
// Close codes after which trying again cannot help (docs/protocol.md).
const REFUSED = new Set([4401, 4403, 4404]);

/** The wait before try number `attempt` (0 = the first retry), in ms. */
export function backoffDelay(attempt, retryAfterS = 0, random = Math.random) {
  const ceiling = Math.min(BACKOFF.LAST_MS, BACKOFF.FIRST_MS * 2 ** attempt);
  const jittered = ceiling / 2 + random() * (ceiling / 2);
  return Math.max(jittered, retryAfterS * 1000);
}

export class RoomSocket extends EventTarget {
  constructor(code, token) {
    super();
    this.code = code;
    this.token = token;
    this.v = null; // last room version applied
    this.inc = null; // the room incarnation that version belongs to
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject}
    this.attempt = 0;
    this.closed = false;
    this.status = "connecting";
    this.timer = null;
    this._onOnline = () => this.reconnectNow();
    this._onOffline = () => this.drop();
    window.addEventListener("online", this._onOnline);
    window.addEventListener("offline", this._onOffline);
  }

  url() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    return `${proto}//${location.host}/ws/rooms/${encodeURIComponent(this.code)}`;
  }

  /** The socket's first message (docs/protocol.md). batch: one frame may carry
   * several messages (a change's events, view and ack). */
  hello() {
    const msg = { auth: this.token, batch: true };
    // which client this is: the server then says which it serves (welcome)
    if (BUILD) msg.build = BUILD;
    // A version counts from 0 in each incarnation of the room (a restarted
    // or new server): only the pair says where this tab left off.
    if (this.v !== null && this.inc !== null) {
      msg.since = this.v;
      msg.inc = this.inc;
    }
    return msg;
  }

  connect() {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.setStatus(this.attempt === 0 && this.v === null ? "connecting" : "reconnecting");
    let ws;
    try {
      ws = new WebSocket(this.url());
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    this.synced = false; // true once this connection delivered a full view
    this.room = null; // the room part of this connection's last view
    ws.onopen = () => {
      ws.send(JSON.stringify(this.hello()));
      // not "online" yet, nor a fresh start for the backoff: a socket the
      // server refuses opens too (rate limited, room away); a view says it is in
    };
    ws.onmessage = (e) => this.receive(e.data);
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.failPending("The connection was lost before the server answered. Try again.");
      if (this.closed) return;
      // The server refused this seat for good: bad token, no room, kicked.
      if (REFUSED.has(e.code)) {
        this.closed = true;
        this.setStatus("refused");
        this.emit("refused", { code: e.code, reason: e.reason || this.lastError || "" });
        return;
      }
      if (e.code === 1000) {
        this.closed = true;
        this.setStatus("left");
        this.emit("refused", { code: e.code, reason: e.reason || "You left the room." });
        return;
      }
      this.scheduleReconnect();
    };
    ws.onerror = () => {
      /* onclose follows and reconnects */
    };
  }

  scheduleReconnect() {
    if (this.closed) return;
    clearTimeout(this.timer);
    const offline = navigator.onLine === false;
    if (!offline && this.attempt >= BACKOFF.GIVE_UP) {
      // stop here: one plain message and a button (retry), not a loop
      this.setStatus("gaveup");
      this.emit("gaveup", { reason: this.lastError || "" });
      return;
    }
    const delay = backoffDelay(this.attempt, this.retryAfter || 0);
    this.retryAfter = 0;
    this.attempt += 1;
    this.retryAt = Date.now() + delay;
    this.setStatus(offline ? "offline" : "reconnecting");
    this.timer = setTimeout(() => this.connect(), delay);
  }

  /** The person asked to try again after the page gave up. */
  retry() {
    if (this.closed) return;
    this.attempt = 0;
    this.lastError = this.refusal = "";
    this.connect();
  }

  /** The network went away: stop waiting on a socket that cannot answer, say
   * so, and come back (with since) as soon as the browser is online again. */
  drop() {
    const ws = this.ws;
    if (!ws || this.closed) return;
    this.ws = null;
    ws.onclose = ws.onmessage = ws.onerror = null;
    try {
      ws.close();
    } catch {
      /* already closing */
    }
    this.failPending("You went offline before the server answered. Try again.");
    this.scheduleReconnect();
  }

  reconnectNow() {
    if (this.closed || (this.ws && this.ws.readyState <= 1)) return;
    // the page came back into view or online: try now, unless the server
    // said when (Retry-After) or the page already gave up
    if (this.status === "gaveup" || (this.retryAt && Date.now() < this.retryAt && this.waitAsked)) return;
    this.connect();
  }

  /** Something was lost: ask for a fresh full view (or reconnect). */
  resync() {
    if (this.resyncing) return;
    this.resyncing = true;
    this.emit("resync", {});
    const id = this.nextId++;
    if (!this.sendRaw({ id, cmd: { type: "resync" } })) {
      this.resyncing = false;
      this.reconnectNow();
    }
  }

  setStatus(s) {
    if (this.status === s) return;
    this.status = s;
    // with the server's reason while it keeps refusing this socket
    this.emit("status", { status: s, detail: this.refusal || "" });
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  receive(text) {
    let data;
    try {
      data = JSON.parse(text);
    } catch {
      return;
    }
    // A batched frame is an array of messages, handled in order as if each had
    // come alone.
    for (const msg of Array.isArray(data) ? data : [data]) this.handle(msg);
  }

  handle(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.welcome) {
      serverBuild(msg.welcome.build);
      return;
    }
    const v = typeof msg.v === "number" ? msg.v : null;
    if (msg.view) {
      // With batch=1 a view leaves out the room part while it is unchanged:
      // keep the last one (every new socket and every resync gets it).
      let view = msg.view;
      if (view.room === undefined) {
        if (!this.room) {
          this.resync();
          this.settle(msg);
          return;
        }
        view = { ...view, room: this.room };
      } else {
        this.room = view.room;
      }
      // In: the next loss starts its backoff afresh.
      this.attempt = 0;
      this.waitAsked = false;
      this.refusal = "";
      if (this.status !== "online") this.setStatus("online");
      // A view replaces everything we knew: adopt its version whatever it is.
      this.v = v;
      this.inc = typeof msg.inc === "string" ? msg.inc : null;
      this.synced = true;
      this.resyncing = false;
      this.emit("view", { v, view });
    } else if (v !== null && this.synced && this.v !== null && v > this.v + 1) {
      // A gap: something between our last version and this one was lost.
      this.resync();
      if (!msg.event) this.settle(msg);
      return;
    } else if (msg.event) {
      if (v !== null) this.v = this.v === null ? v : Math.max(this.v, v);
      this.emit("event", { v, event: msg.event });
    }
    this.settle(msg);
  }

  /** Resolve or reject the request a reply names. */
  settle(msg) {
    if (msg.story) this.emit("story", msg.story);
    if (!("re" in msg)) return;
    if (msg.error) this.lastError = msg.error.message;
    if (msg.error && msg.re === null && !this.synced) {
      // The server refusing this socket before letting it in (too many
      // lookups, the room's server away): said once, in the status line,
      // not as a message per try; wait at least as long as it asked.
      const wait = Number(msg.error.retry_after);
      if (wait > 0) {
        this.retryAfter = wait;
        this.waitAsked = true;
      }
      this.refusal = msg.error.message;
      this.emit("status", { status: this.status, detail: this.refusal });
      return;
    }
    const p = msg.re === null ? null : this.pending.get(msg.re);
    if (p) this.pending.delete(msg.re);
    if (msg.error) {
      const err = new Error(msg.error.message || "Refused.");
      err.code = msg.error.code;
      if (p) p.reject(err);
      else this.emit("error", msg.error);
    } else if (p) {
      p.resolve(msg);
    }
  }

  sendRaw(obj) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(obj));
    return true;
  }

  request(body) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.sendRaw({ id, ...body })) {
        reject(new Error("You are offline right now; the move was not sent."));
        return;
      }
      this.pending.set(id, { resolve, reject });
    });
  }

  action(action) {
    return this.request({ action });
  }

  cmd(cmd) {
    return this.request({ cmd });
  }

  failPending(message) {
    for (const p of this.pending.values()) p.reject(new Error(message));
    this.pending.clear();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    window.removeEventListener("online", this._onOnline);
    window.removeEventListener("offline", this._onOffline);
    if (this.ws) this.ws.close(1000);
    this.ws = null;
    this.failPending("Left the room.");
  }
}
