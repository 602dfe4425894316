// The room's WebSocket: its first message carries the seat token (never the
// URL, which servers log), it reconnects by itself with backoff (resuming with
// since=v in incarnation inc, so nothing is missed), notices version gaps and asks for a fresh
// view, and matches replies to requests by id.

import { BUILD, serverBuild } from "./build.js";

const BACKOFF_MS = [300, 800, 1500, 3000, 5000, 8000];
// Close codes after which trying again cannot help (docs/protocol.md).
const REFUSED = new Set([4401, 4403, 4404]);

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
      this.attempt = 0;
      this.setStatus("online");
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
    this.setStatus(navigator.onLine === false ? "offline" : "reconnecting");
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
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
    this.attempt = 0;
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
    this.emit("status", { status: s });
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
    if (!("re" in msg)) return;
    if (msg.error) this.lastError = msg.error.message;
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
