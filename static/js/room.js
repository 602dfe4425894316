// The room page: owns the socket, the latest view, the log and the chat, and
// hands the felt to the table module of the room's game. Table modules are
// plain functions of a context object; they keep their own UI state (picked
// cards, melds being arranged) in ctx.ui, which survives new views.
import { drawFelt } from "./felt.js";
import { h, mount, patch, toast, $, rememberFocus, restoreFocus } from "./dom.js";
import { seatFor, forgetSeat, pref, setPref, loadSite, rememberMove } from "./api.js";
import { RoomSocket } from "./net.js";
import { showJoin, lobbyPanel, seatsPanel, loadGames, claimSeat } from "./lobby.js";
import { localTimer } from "./timer.js";
import { chatPanel } from "./chat.js";
import { logPanel, roomEventText } from "./log.js";
import { TurnCue, soundToggle, updateMoreCue } from "./cue.js";
import { eveningEl } from "./records.js";
import { setCalmCheck, reloadWhenCalm } from "./build.js";
import { TurnNudge, alertsSwitch } from "./nudge.js";

const TABLES = {
  posso: () => import("./tables/posso.js"),
  possession: () => import("./tables/possession.js"),
  possum: () => import("./tables/possum.js"),
  bigtwo: () => import("./tables/bigtwo.js"),
};

const STATUS_TEXT = {
  connecting: "Connecting…",
  reconnecting: "Connection lost: reconnecting…",
  offline: "You are offline. Waiting for the network…",
  refused: "This seat is no longer valid.",
  left: "You left the room.",
  gaveup: "Could not reach the room.",
};

export function showRoom(app, code) {
  const claim = new URLSearchParams(location.hash.slice(1)).get("claim");
  if (claim) {
    history.replaceState(history.state, "", location.pathname); // the secret leaves the address bar
    claimSeat(code, claim).catch((e) => {
      toast(e.message, "error");
      showJoin(app, code);
    });
    return null;
  }
  const seat = seatFor(code);
  if (!seat || !seat.token) {
    showJoin(app, code);
    return null;
  }
  const room = new RoomPage(app, code, seat);
  room.start();
  return () => room.stop();
}

class RoomPage {
  constructor(app, code, seat) {
    this.app = app;
    this.code = code.toUpperCase();
    this.seat = seat;
    this.view = null;
    this.table = null; // the loaded table module
    this.tableName = null;
    this.ui = { selected: [], sort: pref("sort", "suit") };
    this.games = null;
    this.tab = pref("tab", "log");
    this.saved = this.loadSession();
    this.closed = this.loadClosed();
    this.log = logPanel();
    this.chat = chatPanel((text) => this.socket.cmd({ type: "chat", text }));
    this.lastEvents = [];
    this.lastMoves = {}; // seat -> {text, n}: each seat's last move, for its badge
    this.cue = new TurnCue();
    this.nudge = new TurnNudge(this.code.toUpperCase());
    for (const line of this.saved.log || []) this.log.add(line.text, line.cls, true, line.v);
    for (const line of this.saved.chat || []) this.chat.addRaw(line);
  }

  // The log and chat live in localStorage (per room), with the version they
  // reach: a new tab, or the browser opened again, shows them and resumes
  // with &since=v, so the server sends what happened in between.
  loadSession() {
    try {
      const key = `cardroom:session:${this.code}`;
      return JSON.parse(localStorage.getItem(key) || sessionStorage.getItem(key)) || {};
    } catch {
      return {};
    }
  }

  saveSession() {
    try {
      localStorage.setItem(
        `cardroom:session:${this.code}`,
        JSON.stringify({ v: this.socket.v, inc: this.socket.inc, log: this.log.lines.slice(-200), chat: this.chat.lines.slice(-100) }),
      );
    } catch {
      /* storage full or unavailable: a refresh just starts the log afresh */
    }
  }

  // Panels the player closed stay closed across a refresh, for as long as
  // the game they belong to: the game-over card, and a table's own (Posso's
  // last-hand results close by setting ui.lastSeen).
  loadClosed() {
    try {
      return JSON.parse(localStorage.getItem(`cardroom:closed:${this.code}`)) || {};
    } catch {
      return {};
    }
  }

  /** Take back what was closed in this game (on each view: cheap). */
  reopenClosed() {
    const game = this.view.room.games_played;
    if (this.closed.game !== game) return;
    if (this.closed.result) this.resultSeen = game;
    if (this.ui.lastSeen === undefined && this.closed.lastSeen !== undefined) this.ui.lastSeen = this.closed.lastSeen;
  }

  rememberClosed() {
    if (!this.view) return;
    const game = this.view.room.games_played;
    const now = { game, result: this.resultSeen === game, lastSeen: this.ui.lastSeen };
    const was = this.closed;
    if (was.game === now.game && was.result === now.result && was.lastSeen === now.lastSeen) return;
    this.closed = now;
    try {
      localStorage.setItem(`cardroom:closed:${this.code}`, JSON.stringify(now));
    } catch {
      /* storage unavailable: they come back after a refresh, as before */
    }
  }

  start() {
    mount(this.app, h("div.loading", h("p", "Opening the room…")));
    this.socket = new RoomSocket(this.code, this.seat.token);
    // Where this browser left off, in which incarnation of the room: a
    // refresh resumes from there (since=v) instead of hearing the game's
    // story again on top of the log it kept.
    if (typeof this.saved.v === "number") {
      this.socket.v = this.saved.v;
      if (typeof this.saved.inc === "string") this.socket.inc = this.saved.inc;
    }
    this.socket.addEventListener("view", (e) => this.onView(e.detail));
    this.socket.addEventListener("event", (e) => this.onEvent(e.detail));
    this.socket.addEventListener("status", (e) => this.onStatus(e.detail.status, e.detail.detail));
    this.socket.addEventListener("gaveup", () => this.onGaveUp());
    this.socket.addEventListener("story", (e) => { this.storyBefore = e.detail.before; this.showOlder(); });
    this.socket.addEventListener("refused", (e) => this.onRefused(e.detail));
    this.socket.addEventListener("error", (e) => this.showError(e.detail.message || "Refused."));
    this.socket.connect();
    loadGames().then((g) => {
      this.games = g;
      if (this.view && this.isLobby()) this.render();
    }).catch(() => {});
    loadSite().then(() => {
      if (this.view && this.isLobby()) this.render();
    });
    this.onVisible = () => {
      if (document.visibilityState === "visible") this.socket.reconnectNow();
      this.nudge.visibility();
    };
    document.addEventListener("visibilitychange", this.onVisible);
    setCalmCheck(() => this.calm());
  }

  /** Nothing in the middle here: not your move, and none on its way
   * (build.js reloads a stale client only then). */
  calm() {
    if (!this.view || this.socket.pending.size) return false;
    return !(this.view.legal && this.view.legal.length);
  }

  stop() {
    setCalmCheck(null);
    delete document.body.dataset.v;
    delete document.body.dataset.room;
    document.removeEventListener("visibilitychange", this.onVisible);
    this.socket.close();
    setStatusBanner(null);
  }

  /** One line says how the connection is: in the banner once the room is
   * shown, in place of "Opening the room…" before (never both, and a refusal
   * repeated on each try replaces the line instead of piling up). */
  onStatus(status, detail) {
    document.body.classList.toggle("is-offline", status !== "online");
    if (status === "gaveup") return; // onGaveUp says it, with its button
    let text = status === "online" ? null : STATUS_TEXT[status] || status;
    if (text && detail) text = `${text} ${detail[0].toUpperCase()}${detail.slice(1)}.`;
    if (!this.view && text) {
      setStatusBanner(null);
      const line = this.app.querySelector(".loading p");
      if (line) line.textContent = text;
      else mount(this.app, h("div.loading", h("p", text)));
      return;
    }
    setStatusBanner(text);
  }

  /** The socket stopped trying: say so plainly, with one button to try again. */
  onGaveUp() {
    const again = () => {
      setStatusBanner(null);
      this.socket.retry();
    };
    const why = this.socket.lastError;
    const text = "Could not reach the room after several tries.";
    if (this.view) {
      setStatusBanner(text, { label: "Try again", onclick: again });
      return;
    }
    mount(this.app,
      h("div.loading.gaveup",
        h("p", text),
        why ? h("p.muted", why[0].toUpperCase() + why.slice(1)) : null,
        h("button.btn.primary", { type: "button", onclick: () => {
          mount(this.app, h("div.loading", h("p", "Opening the room…")));
          again();
        } }, "Try again")));
  }

  /** The log's button for the game's story before what this tab was told. */
  showOlder() {
    const list = this.log.el;
    let btn = list.querySelector(".older");
    if (this.storyBefore === null || this.storyBefore === undefined) {
      if (btn) btn.remove();
      return;
    }
    if (!btn) {
      btn = h("button.btn.small.older", { type: "button", onclick: () => this.loadOlder() }, "Earlier moves");
      list.prepend(btn);
    }
  }

  /** Fetch one older page of events and put its lines above the log's. */
  async loadOlder() {
    const before = this.storyBefore;
    if (typeof before !== "number" || !this.table) return;
    let data;
    try {
      data = (await this.socket.cmd({ type: "story", before })).data;
    } catch (e) {
      toast(e.message, "error");
      return;
    }
    const ctx = this.context();
    const lines = [];
    for (const { v, event } of data.events) {
      let d = null;
      if (event.type === "room") d = roomEventText(event);
      else if (event.type !== "chat" && this.table.describe) d = this.table.describe(event, ctx);
      if (!d) continue;
      const text = typeof d === "string" ? d : d.text;
      const cls = event.type === "room" ? "sys" : typeof d === "string" ? "" : d.cls || "";
      if (!this.log.lines.some((l) => l.v === v && l.text === text)) lines.push({ text, cls, v });
    }
    this.log.prepend(lines);
    this.storyBefore = data.before;
    this.showOlder();
  }

  onRefused({ code, reason }) {
    if (code === 4401 || code === 4403 || code === 4404) forgetSeat(this.code);
    const moved = code === 4401 && /moved to another device/.test(reason || "");
    if (moved) rememberMove(this.code, this.seat.name);
    const why = moved
      ? "You continue on another device now: your place in this room went there, and with it (unless you are signed in) your games, records and turn alerts. This browser is no longer you in this room."
      : {
      4401: "This browser's seat in the room is no longer valid.",
      4403: "The host removed you from this room.",
      4404: "This room does not exist any more.",
      1000: "You left the room.",
    }[code] || reason;
    mount(this.app,
      h("div.lobby", h("section.panel", { style: { maxWidth: "520px", margin: "30px auto" } },
        h("h1", `Room ${this.code}`),
        h("p", why),
        reason && reason !== why ? h("p.muted", reason) : null,
        h("div.row",
          code !== 4404 ? h("a.btn.primary", { href: `/r/${this.code}`, "data-nav": "" }, "Join again") : null,
          h("a.btn", { href: "/", "data-nav": "" }, "Home")),
      )));
  }

  showError(message) {
    message = message ? message[0].toUpperCase() + message.slice(1) : "Refused.";
    this.ui.error = message;
    const box = this.app.querySelector(".actmsg");
    if (box) {
      // Shown where the player acts: a toast too would only cover the prompt.
      box.textContent = message;
      box.classList.add("error");
    } else {
      toast(message, "error");
    }
  }

  isLobby() {
    const v = this.view;
    return !v || !v.game || v.room.status === "lobby";
  }

  onView({ v, view }) {
    const prev = this.view;
    this.view = view;
    this.timer = localTimer(view.timer);
    this.seat.seat = view.you.seat;
    if (prev && prev.game && view.game && prev.room.status === "playing" && view.room.status !== "playing") {
      this.tab = this.tab === "chat" ? "chat" : "log";
    }
    this.maybeAddBots();
    this.reopenClosed();
    this.render();
    // The version and status on <body>: handy for tests and for styling.
    document.body.dataset.v = String(v);
    document.body.dataset.room = view.room.status;
    this.saveSession();
    reloadWhenCalm();
  }

  /** Bots asked for on the create form are added once the room is open. */
  maybeAddBots() {
    const key = `cardroom:addbots:${this.code}`;
    const n = Number(sessionStorage.getItem(key) || 0);
    if (!n || !this.view.you.host || this.view.room.status !== "lobby") return;
    sessionStorage.removeItem(key);
    const free = this.view.room.seats.filter((s) => !s).length;
    for (let i = 0; i < Math.min(n, free); i++) {
      this.socket.cmd({ type: "add_bot" }).catch((e) => toast(e.message, "error"));
    }
  }

  onEvent({ v, event }) {
    if (event.type === "chat") {
      this.chat.add(event);
      if (this.tab !== "chat") this.markUnread();
      this.saveSession();
      return;
    }
    let text = null;
    let cls = "";
    if (event.type === "room") {
      text = roomEventText(event);
      cls = "sys";
      if (event.what === "started") {
        this.logLine(`— Game ${event.game_no ?? ""} starts —`, "big", v);
        // The next events may belong to another game: describe them once
        // the new game's table is loaded.
        this.table = null;
        this.lastEvents = [];
        this.lastMoves = {};
      }
    } else if (!this.table) {
      // The table module loads with the first view; describe these then.
      (this.early ||= []).push({ v, event });
      return;
    } else if (this.table.describe) {
      const ctx = this.context();
      const d = this.table.describe(event, ctx);
      if (d) {
        text = typeof d === "string" ? d : d.text;
        cls = typeof d === "string" ? "" : d.cls || "";
        // Each seat's last move stays on its seat until its next one; only
        // what the whole table saw (a private event is addressed to a seat).
        if (typeof event.seat === "number" && (event.to === null || event.to === undefined)) {
          this.lastMoves[event.seat] = { text, n: (this.moveCount = (this.moveCount || 0) + 1) };
        }
      }
      this.lastEvents.push(event);
      if (this.lastEvents.length > 30) this.lastEvents.shift();
    } else {
      this.lastEvents.push(event);
    }
    if (text) this.logLine(text, cls, v);
    this.saveSession();
  }

  /** A line for an event at version v, once: an event told again (a new
   * tab hears the game's story so far) is not logged twice. */
  logLine(text, cls, v) {
    if (typeof v === "number" && this.log.lines.some((l) => l.v === v && l.text === text)) return;
    this.log.add(text, cls, true, v);
  }

  markUnread() {
    const b = this.app.querySelector('[data-tab="chat"]');
    if (b) b.classList.add("unread");
  }

  /** Everything a table module needs, rebuilt for each render. */
  context() {
    const view = this.view;
    const page = this;
    const room = view.room;
    return {
      room,
      you: view.you,
      me: view.you.seat,
      game: view.game,
      legal: view.legal || [],
      timer: this.timer,
      ui: this.ui,
      events: this.lastEvents,
      lastMoves: this.lastMoves,
      socket: this.socket,
      name(seat) {
        if (seat === null || seat === undefined) return "—";
        const s = room.seats[seat];
        if (seat === view.you.seat) return "You";
        return s ? s.name : `Seat ${seat + 1}`;
      },
      seatName(seat) {
        const s = room.seats[seat];
        return s ? s.name : `Seat ${seat + 1}`;
      },
      act(action) {
        page.ui.error = null;
        return page.socket.action(action).then(
          (r) => r,
          (err) => {
            page.showError(err.message);
            throw err;
          },
        );
      },
      cmd(c) {
        return page.socket.cmd(c).catch((err) => {
          page.showError(err.message);
          throw err;
        });
      },
      rerender() {
        page.renderTable();
      },
      soundToggle: () => soundToggle(() => page.renderTable()),
      setSort(by) {
        page.ui.sort = by;
        setPref("sort", by);
        page.renderTable();
      },
    };
  }

  async ensureTable(name) {
    if (this.tableName === name && this.table) return;
    const load = TABLES[name];
    if (!load) throw new Error(`This page cannot show ${name} yet.`);
    this.table = await load();
    this.tableName = name;
    const early = this.early || [];
    this.early = [];
    for (const e of early) this.onEvent(e);
  }

  render() {
    const view = this.view;
    if (!view) return;
    this.cue.update(view, `${view.room.title || view.room.game} · room ${this.code}`);
    this.nudge.update(view);
    if (this.isLobby()) {
      this.renderLobby();
      return;
    }
    this.ensureTable(view.room.game).then(
      () => this.renderShell(),
      (err) => mount(this.app, h("div.lobby", h("p.err", err.message))),
    );
  }

  renderLobby() {
    const ctx = { room: this.view.room, you: this.view.you, socket: this.socket };
    const focus = rememberFocus();
    this.shell = null;
    mount(this.app,
      h("div.lobby",
        h("div.cols",
          h("section.panel", h("h1", `${this.view.room.title || this.view.room.game}`), lobbyPanel(ctx, this.games), alertsSwitch()),
          h("section.panel.chatbox", h("h2", "Chat"), this.chat.el),
        ),
      ),
    );
    restoreFocus(focus);
  }

  /** The table layout: felt on the left (or top), side panel with tabs. */
  renderShell() {
    if (!this.shell || !this.app.contains(this.shell.root)) {
      // tabindex -1: the focus can rest on the table itself (see restoreFocus)
      const felt = h("section.felt", { id: "felt", "aria-label": "Card table", tabindex: -1 });
      const tabs = h("div.tabs", { role: "tablist" });
      // focusable: the keyboard can scroll a long log or score sheet
      const body = h("div.tabbody", { role: "tabpanel", tabindex: 0, "aria-label": "Side panel" });
      const side = h("aside.side", tabs, body);
      const root = h("div.room", felt, side);
      mount(this.app, root);
      // the table area scrolls inside the felt (scroll events do not bubble)
      felt.addEventListener("scroll", () => updateMoreCue(felt), { passive: true, capture: true });
      if (window.ResizeObserver) new ResizeObserver(() => updateMoreCue(felt)).observe(felt);
      this.shell = { root, felt, tabs, body, side, tabName: null };
    }
    this.renderTable();
    this.renderSide();
  }

  renderTable() {
    if (!this.shell || !this.view || !this.table) return;
    const ctx = this.context();
    const focus = rememberFocus();
    let content;
    try {
      content = this.table.render(ctx);
    } catch (err) {
      console.error(err);
      content = h("p.err", `Could not draw the table: ${err.message}`);
    }
    const felt = this.shell.felt;
    felt.className = `felt game-${this.view.room.game} ${this.view.room.status}`;
    drawFelt(felt, content, this.view.room.status === "finished" ? this.resultBanner(ctx) : null);
    restoreFocus(focus, felt);
    requestAnimationFrame(() => updateMoreCue(felt));
    if (this.ui.lastSeen !== undefined) this.rememberClosed(); // a table's panel was closed
  }

  resultBanner(ctx) {
    const room = this.view.room;
    if (this.resultSeen === room.games_played) return null;
    const result = this.view.game?.result || room.result;
    if (!result) return null;
    const places = result.places || [];
    const medal = ["1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "10th"];
    let rank = 0;
    const rows = places.map((group) => {
      const label = medal[rank] || `${rank + 1}th`;
      rank += group.length;
      // A score says something the place does not (Posso points, cards
      // left); a table whose score is the place gives none.
      const scores = result.scores ? group.map((s) => (this.table.scoreText ? this.table.scoreText(result.scores[s], ctx) : String(result.scores[s]))).filter(Boolean) : [];
      // the names they had when the game ended, whoever sits there now
      const name = (s) => room.result_names?.[s] ?? ctx.seatName(s);
      return h("li", h("strong", label), " ", group.map(name).join(" & "),
        scores.length ? h("span.muted", ` · ${scores.join(", ")}`) : null);
    });
    const me = ctx.me;
    const won = me !== null && places[0]?.includes(me);
    const isHost = ctx.you.host;
    return h("div.result", { role: "dialog", "aria-label": "Game over" },
      h("h2", won ? "You won!" : "Game over"),
      h("ol.places", rows),
      room.tally && room.tally.length && room.game === "bigtwo"
        ? h("p.muted", "Series: ", room.tally.map((t) => `${t.name} ${t.points}`).join(" · "))
        : null,
      h("div.row",
        isHost ? h("button.primary", { id: "rematch", onclick: () => ctx.cmd({ type: "rematch" }).catch(() => {}) }, "Rematch") : h("span.muted", "The host can start a rematch."),
        h("button", { onclick: () => this.selectTab("players") }, "Seats & settings"),
        this.table.sheet ? h("button", { onclick: () => this.selectTab("sheet") }, "Score sheet") : null,
        h("button", { onclick: () => this.hideResult() }, "Look at the table"),
      ),
    );
  }

  /** The game-over card stays closed once looked past (until the next game). */
  hideResult() {
    if (this.view?.room.status !== "finished") return;
    this.resultSeen = this.view.room.games_played;
    this.rememberClosed();
    this.app.querySelector(".result")?.remove();
  }

  tabsFor() {
    const tabs = [["log", "Log"], ["chat", "Chat"], ["players", "Seats"], ["evening", "Evening"]];
    if (this.table?.sheet) tabs.splice(1, 0, ["sheet", "Score sheet"]);
    return tabs;
  }

  selectTab(name) {
    this.hideResult();
    this.tab = name;
    setPref("tab", name);
    // open first: a panel drawn while closed (a phone) has no height to scroll
    document.body.classList.add("side-open");
    this.renderSide();
    const b = this.shell?.tabs.querySelector(`[data-tab="${name}"]`);
    if (b) b.focus();
  }

  renderSide() {
    const { tabs, body } = this.shell;
    const list = this.tabsFor();
    if (!list.find(([k]) => k === this.tab)) this.tab = "log";
    const unread = tabs.querySelector(".unread")?.dataset.tab;
    patch(tabs, list.map(([k, label]) =>
      h("button.tab", {
        role: "tab", "aria-selected": String(k === this.tab), dataset: { tab: k, key: `tab:${k}` },
        class: k === unread && k !== this.tab ? "unread" : null,
        onclick: () => {
          if (k === this.tab && document.body.classList.contains("side-open")) document.body.classList.remove("side-open");
          else this.selectTab(k);
        },
      }, label)));
    let content;
    if (this.tab === "chat") content = this.chat.el;
    else if (this.tab === "log") content = this.log.el;
    else if (this.tab === "sheet") content = this.table.sheet(this.context());
    else if (this.tab === "evening") {
      // fetched again only when another game has finished
      if (this.eveningKey !== this.view.room.games_played || !this.eveningEl) {
        this.eveningKey = this.view.room.games_played;
        this.eveningEl = eveningEl(this.code);
      }
      content = this.eveningEl;
    } else {
      // Rebuild the seats panel only when the room changed, so a host's
      // half-edited form survives the game's many views.
      const key = JSON.stringify([this.view.room, this.view.you, !!this.games]);
      if (key !== this.playersKey || !this.playersEl) {
        this.playersKey = key;
        this.playersEl = h("div.players", lobbyPanel({ room: this.view.room, you: this.view.you, socket: this.socket }, this.games), alertsSwitch());
      }
      content = this.playersEl;
    }
    const kept = [this.chat.el, this.log.el, this.playersEl];
    if (this.tab === "sheet" && body.firstChild && !kept.includes(body.firstChild)) {
      // drawn afresh from each view: patched, so a tap on it is not lost
      patch(body, content);
    } else if (body.firstChild !== content) {
      const focus = rememberFocus();
      mount(body, content);
      restoreFocus(focus);
    }
    if (this.tab === "log") this.log.scroll();
    if (this.tab === "chat") this.chat.scroll();
  }
}

function setStatusBanner(text, action = null) {
  const el = $("#netstatus");
  if (!el) return;
  el.hidden = !text;
  el.textContent = text || "";
  if (text && action) {
    el.append(" ", h("button.btn.small", { type: "button", onclick: action.onclick }, action.label));
  }
}


export { seatsPanel };
