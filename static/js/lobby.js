// The home page (open a room, join one by code or link) and the room's lobby
// panel (invite link, seats, host controls, house rules).
import { rulesLink } from "./rules.js";
import { h, mount, toast } from "./dom.js";
import { api, rememberSeat, savedName, rememberName, codeFromInput, inviteLink, isLocalLink, seatFor } from "./api.js";
import { cardEl } from "./cards.js";
import { optionsForm, describeOptions } from "./options.js";
import { go } from "./nav.js";
import { awayBadge } from "./tables/common.js";
import { countdown, localTimer } from "./timer.js";

const BLURB = {
  posso: "Hypercharged rummy over ten hands: go down, play on, beg cards with Posso.",
  possession: "Meld properties into your estate, and steal your opponents' ones.",
  possum: "Play cards that match, add up to, or bridge the top card.",
  bigtwo: "Shed your hand first with singles, pairs, triples and poker hands.",
};

const SETTING_HELP = {
  posso_window: "Seconds the Posso window stays open after each discard.",
  posso_answer: "Seconds the next player has to allow or deny a Posso (no answer = allow).",
  cut: "Seconds the dealer has to cut before it counts as a miss.",
  turn_timer: "Seconds per turn before a bot moves for you. Empty: no turn timer.",
  disconnect_grace: "Seconds a player may be gone before the host can hand their seat to a bot.",
  bot_delay: "Seconds a bot thinks before it moves.",
  public_replays: "Anyone with the link may replay this room's finished games.",
};

/** How a bot plays (app/bots/levels.py); the host's last pick is remembered. */
const BOT_LEVELS = [["easy", "Easy"], ["normal", "Normal"], ["strong", "Strong"]];
const BOT_LEVEL_KEY = "cardroom:botlevel";
function botLevel() {
  const saved = localStorage.getItem(BOT_LEVEL_KEY);
  return BOT_LEVELS.some(([v]) => v === saved) ? saved : "normal";
}
/** A bot's tag: "bot", with its level when it has one. */
export function botTag(s) {
  return s.level ? `${s.level} bot` : "bot";
}

let gamesCache = null;
/** GET /api/games, once per page load. */
export async function loadGames() {
  if (!gamesCache) gamesCache = api("/api/games").catch((e) => {
    gamesCache = null;
    throw e;
  });
  return gamesCache;
}

let settingsCache = null;
export async function loadSettingsSchema() {
  if (!settingsCache) settingsCache = api("/api/room-settings").catch(() => null);
  return settingsCache;
}

/** The room settings form, opened at `current` (a room's stored settings)
 * and showing only what applies to `game` (Posso's timers for Posso). */
export function settingsForm(info, current = {}, game = null) {
  if (!info || !info.schema) return null;
  const props = {};
  for (const [k, p] of Object.entries(info.schema.properties || {})) {
    if (game && POSSO_ONLY.has(k) && game !== "posso") continue;
    props[k] = !p.description && SETTING_HELP[k] ? { ...p, description: SETTING_HELP[k] } : p;
  }
  return optionsForm({ name: "room", options_schema: { ...info.schema, properties: props } }, current);
}
/** Settings only Posso uses: its window, answer and cut timers. */
const POSSO_ONLY = new Set(["posso_window", "posso_answer", "cut"]);

function nameField(id) {
  return h("input", {
    type: "text", id, maxlength: 24, required: true, autocomplete: "nickname",
    placeholder: "Your name", value: savedName(),
  });
}

function readName(input) {
  const name = input.value.trim();
  if (!name) throw new Error("Type the name the others will see.");
  rememberName(name);
  return name;
}

export function showHome(app) {
  const createErr = h("p.err", { role: "alert" });
  const joinErr = h("p.err", { role: "alert" });
  const name = nameField("create-name");
  const optsBox = h("div");
  const settingsBox = h("div");
  const picks = h("div.gamepick", { role: "radiogroup", "aria-label": "Game" });
  let games = [];
  let form = null;
  let sform = null;

  const choose = (g) => {
    form = optionsForm(g);
    mount(optsBox, h("fieldset", h("legend", `House rules for ${g.title}`), form.el));
  };

  const create = async (e) => {
    e.preventDefault();
    createErr.textContent = "";
    try {
      const game = picks.querySelector("input:checked")?.value;
      if (!game) throw new Error("Pick a game.");
      const body = { game, options: form.values(), name: readName(name) };
      if (sform) {
        const s = sform.values();
        if (Object.keys(s).length) body.settings = s;
      }
      const bots = Number(botsInput.value || 0);
      const r = await api("/api/rooms", { method: "POST", body });
      rememberSeat(r.code, { token: r.token, seat: r.seat, name: body.name, player: r.player });
      if (bots > 0) sessionStorage.setItem(`cardroom:addbots:${r.code.toUpperCase()}`, String(bots));
      go(`/r/${r.code}`);
    } catch (err) {
      createErr.textContent = err.message;
    }
  };

  const joinCode = h("input", {
    type: "text", id: "join-code", placeholder: "Room code or invite link",
    autocapitalize: "characters", autocomplete: "off", required: true,
  });
  const joinName = nameField("join-name");
  const join = async (spectator) => {
    joinErr.textContent = "";
    try {
      const code = codeFromInput(joinCode.value);
      if (!code) throw new Error("Type the room code or paste the invite link.");
      await joinRoom(code, readName(joinName), spectator);
    } catch (err) {
      joinErr.textContent = err.message;
    }
  };
  const botsInput = h("input", { type: "number", id: "create-bots", min: 0, max: 9, value: 0, inputmode: "numeric" });

  mount(
    app,
    h("div.home",
      h("section.hero",
        h("div.deco", ["AS", "KH", "QC", "JD"].map((c) => cardEl(c))),
        h("div", h("h1", "Card room"), h("p", "Open a private table, send the link, and play Posso, Possession, Possum or Big Two with friends and bots.")),
      ),
      h("div.cols",
        h("section.panel", { "aria-labelledby": "create-h" },
          h("h2", { id: "create-h" }, "Open a room"),
          h("form", { onsubmit: create, id: "create-form" },
            h("label.field", { for: "create-name" }, h("span.label", "Your name"), name),
            picks,
            optsBox,
            h("details", h("summary", "Room settings (timers, bots)"),
              h("label.field", { for: "create-bots" }, h("span.label", "Bots to seat"), botsInput,
                h("span.help", "Bots take empty seats as soon as the room opens; the host can add or remove them later.")),
              settingsBox),
            createErr,
            h("button.primary.big", { type: "submit" }, "Open room"),
          ),
        ),
        h("div",
          h("section.panel", { "aria-labelledby": "join-h" },
            h("h2", { id: "join-h" }, "Join a room"),
            h("form", { onsubmit: (e) => { e.preventDefault(); join(false); } },
              h("label.field", { for: "join-code" }, h("span.label", "Room"), joinCode),
              h("label.field", { for: "join-name" }, h("span.label", "Your name"), joinName),
              joinErr,
              h("div.row",
                h("button.primary", { type: "submit" }, "Take a seat"),
                h("button", { type: "button", onclick: () => join(true) }, "Watch"),
              ),
            ),
          ),
          recentRooms(),
          h("section.panel", h("h2", "Your games"), h("p", "Score sheets and replays of games you played: ", h("a", { href: "/#history" }, "My games"), ".")),
        ),
      ),
    ),
  );

  loadGames()
    .then((list) => {
      const order = ["posso", "possession", "possum", "bigtwo"];
      const rank = (g) => (order.includes(g.name) ? order.indexOf(g.name) : order.length);
      games = [...list].sort((a, b) => rank(a) - rank(b));
      list = games;
      list.forEach((g, i) => {
        const input = h("input", { type: "radio", name: "game", value: g.name, checked: i === 0 });
        input.addEventListener("change", () => choose(g));
        picks.append(
          h("label", input,
            h("span.title", g.title),
            h("span.sub", `${g.min_seats === g.max_seats ? g.min_seats : `${g.min_seats}-${g.max_seats}`} players`),
            BLURB[g.name] && h("span.sub", { style: { display: "block", marginTop: "4px" } }, BLURB[g.name]),
          ),
        );
      });
      if (games.length) choose(games[0]);
      else createErr.textContent = "No games are installed on this server.";
    })
    .catch((err) => {
      createErr.textContent = err.message;
    });
  loadSettingsSchema().then((info) => {
    sform = settingsForm(info);
    if (sform) mount(settingsBox, sform.el);
  });
}

function recentRooms() {
  const codes = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i);
      if (k && k.startsWith("cardroom:room:")) codes.push(k.slice("cardroom:room:".length));
    }
  } catch {
    /* no storage */
  }
  if (!codes.length) return null;
  return h("section.panel",
    h("h2", "Rooms you are in"),
    h("ul", codes.slice(0, 8).map((c) => h("li", h("a", { href: `/r/${c}`, "data-nav": "" }, c), " ", h("span.muted", `as ${seatFor(c)?.name || "?"}`)))),
  );
}

/** Ask for a seat (or to watch), remember the token, open the room. */
export async function joinRoom(code, name, spectator) {
  const r = await api(`/api/rooms/${encodeURIComponent(code)}/join`, {
    method: "POST",
    body: { name, spectator: !!spectator },
  });
  rememberSeat(r.code, { token: r.token, seat: r.seat, name, player: r.player });
  if (!spectator && (r.seat === null || r.seat === undefined)) {
    toast("The game has started or every seat is taken, so you are watching for now.");
  }
  go(`/r/${r.code}`);
}

/** Take a place back with a one-time seat link (another player made it). */
export async function claimSeat(code, claim) {
  const r = await api(`/api/rooms/${encodeURIComponent(code)}/claim`, { method: "POST", body: { claim } });
  rememberSeat(r.code, { token: r.token, seat: r.seat, name: savedName() || null, player: r.player });
  const others = r.moved_with || [];
  toast(others.length
    ? `Welcome back: your seat is yours again on this device, and so are your places in ${others.length} other room${others.length > 1 ? "s" : ""} (${others.join(", ")}): open each and join to take yours.`
    : "Welcome back: your seat is yours again on this device.");
  go(`/r/${r.code}`);
}

/** The join screen for someone who opened an invite link without a seat. */
export function showJoin(app, code) {
  const err = h("p.err", { role: "alert" });
  const name = nameField("invite-name");
  const info = h("div.muted", "Looking up the room…");
  const go_ = async (spectator) => {
    err.textContent = "";
    try {
      await joinRoom(code, readName(name), spectator);
    } catch (e) {
      err.textContent = e.message;
    }
  };
  mount(app,
    h("div.lobby",
      h("section.panel", { style: { maxWidth: "520px", margin: "20px auto" } },
        h("h1", `Room ${code.toUpperCase()}`),
        info,
        h("form", { onsubmit: (e) => { e.preventDefault(); go_(false); } },
          h("label.field", { for: "invite-name" }, h("span.label", "Your name"), name),
          err,
          h("div.row", h("button.primary.big", { type: "submit" }, "Take a seat"), h("button.big", { type: "button", onclick: () => go_(true) }, "Watch")),
        ),
      ),
    ),
  );
  api(`/api/rooms/${encodeURIComponent(code)}`)
    .then(({ room }) => {
      const people = room.seats.filter((s) => s).map((s) => s.name + (s.bot ? ` (${botTag(s)})` : ""));
      mount(info,
        h("p", h("strong", room.title || room.game), ` · ${room.status === "playing" ? "a game is being played (you can watch, and sit when it ends)" : room.status}`),
        people.length ? h("p", "At the table: ", people.join(", ")) : null,
      );
    })
    .catch((e) => {
      mount(info, h("p.err", e.status === 404 ? "There is no room with this code. Check the link." : e.message));
    });
  name.focus();
}

/** Seats list with connection dots and the host's controls. */
export function seatsPanel(ctx) {
  const { room, you, socket } = ctx;
  const between = room.status !== "playing";
  const isHost = you.host;
  const cmd = (c) => socket.cmd(c).catch((e) => toast(e.message, "error"));
  const handToBot = (s, i) =>
    h("button.small", {
      onclick: () => cmd({ type: "hand_to_bot", seat: i }),
      title: `A bot plays for ${s.name} until they come back`,
    }, "Hand to bot");
  const seatLink = async (i) => {
    try {
      const r = await socket.cmd({ type: "seat_link", seat: i });
      const link = `${inviteLink(room.code)}#claim=${r.data.claim}`;
      try {
        await navigator.clipboard.writeText(link);
        toast(`Seat link for ${r.data.name} copied: it works once, for 15 minutes.`);
      } catch {
        prompt(`Send this link to ${r.data.name} (it works once, for 15 minutes):`, link);
      }
    } catch (e) {
      toast(e.message, "error");
    }
  };
  const list = h("ul.seats");
  room.seats.forEach((s, i) => {
    const row = h("li.seat-row", { dataset: { seat: i } });
    if (!s) {
      row.append(h("span.dot"), h("span.muted", `Seat ${i + 1}: empty`));
      const ctl = h("div.ctl");
      if (between) {
        ctl.append(h("button.small", { onclick: () => cmd({ type: "sit", seat: i }) }, you.seat === null ? "Sit here" : "Move here"));
      }
      if (between && isHost) ctl.append(h("button.small", { onclick: () => cmd({ type: "add_bot", seat: i, level: botLevel() }) }, "+ Bot"));
      row.append(ctl);
      list.append(row);
      return;
    }
    const dotCls = s.bot ? "dot.bot" : s.connected ? "dot.on" : "dot.off";
    row.append(
      h(`span.${dotCls}`, { title: s.bot ? "bot" : s.connected ? "connected" : "disconnected" }),
      h("span.who", s.name),
      h("span.tags",
        i === you.seat && h("span.tag.you", "you"),
        s.host && h("span.tag.host", "host"),
        s.bot && h("span.tag.bot", { dataset: { level: s.level || "" } }, botTag(s)),
        s.auto && h("span.tag.bot", "bot playing"),
        !between ? awayBadge(room, s) : !s.bot && !s.connected && h("span.tag.away", "away"),
        // an away host's role passes to someone here, between games after 10 s
        between && s.host_passes_ms && s.host_passes_ms > Date.now() &&
          h("span.chip.away", countdown(localTimer({ deadline_ms: s.host_passes_ms }), "host passes in")),
      ),
    );
    const ctl = h("div.ctl");
    // anyone playing may hand an away seat to a bot at once
    if (!between && !isHost && you.seat !== null && i !== you.seat && !s.bot && !s.connected && !s.auto) {
      ctl.append(handToBot(s, i));
    }
    // a player whose device is gone for good comes back on another with a
    // one-time link: the host or a player may make one once the grace is over
    if ((you.seat !== null || isHost) && i !== you.seat && !s.bot && !s.connected) {
      const from = s.link_ms || s.grace_ends_ms;
      const early = from && from > Date.now();
      ctl.append(h("button.small", {
        onclick: () => seatLink(i),
        title: early ? "Allowed once their grace period ends" : null,
      }, "Seat link"));
    }
    if (isHost && i !== you.seat) {
      if (s.bot && between) ctl.append(h("button.small", { onclick: () => cmd({ type: "remove_bot", seat: i }) }, "Remove bot"));
      if (!s.bot) {
        ctl.append(h("button.small", { onclick: () => cmd({ type: "make_host", seat: i }) }, "Make host"));
        if (!between && !s.connected && !s.auto) ctl.append(handToBot(s, i));
        ctl.append(h("button.small.danger", { onclick: () => { if (confirm(`Remove ${s.name} from the room?`)) cmd({ type: "kick", seat: i }); } }, "Kick"));
      }
    }
    row.append(ctl);
    list.append(row);
  });
  const watching = room.spectator_names || [];
  if (watching.length) list.append(h("li.seat-row.watchers", h("span.muted", `Watching: ${watching.join(", ")}`)));
  // the host may remove a spectator
  if (isHost) {
    for (const w of room.watchers || []) {
      if (w.player === you.player) continue;
      list.append(h("li.seat-row.watcher", { dataset: { player: w.player } },
        h("span.dot.on"), h("span.who", w.name), h("span.tags", h("span.tag", "watching")),
        h("div.ctl", h("button.small.danger", {
          onclick: () => { if (confirm(`Remove ${w.name} from the room?`)) cmd({ type: "kick", player: w.player }); },
        }, "Remove"))));
    }
    // a removal binds that browser and account until the host lets them back
    for (const r of room.removed || []) {
      list.append(h("li.seat-row.removed", { dataset: { player: r.player } },
        h("span.dot"), h("span.who", r.name), h("span.tags", h("span.tag", "removed")),
        h("div.ctl", h("button.small", {
          onclick: () => cmd({ type: "let_in", player: r.player }),
          title: `${r.name} cannot come back into this room from the same browser or account until you let them`,
        }, "Let back in"))));
    }
  }
  list.append(h("li.seat-row.move", moveBox(room, socket)));
  return list;
}

/** "Continue on another device": a one-time link, and its QR code, that
 * moves this person's own place to a phone or another computer. */
function moveBox(room, socket) {
  const box = h("div.move-box");
  const show = async () => {
    try {
      const r = await socket.cmd({ type: "move_link" });
      const link = `${inviteLink(room.code)}#claim=${r.data.claim}`;
      const qr = await api("/api/qr", { method: "POST", body: { text: link } });
      const me = await api("/api/me").catch(() => null);
      mount(box,
        h("p.muted", "Open this on your other device (once, within 15 minutes)."),
        h("p.move-what", me && me.signed_in
          ? "That device then plays your place here. Your games and records stay with your account; this browser leaves the room."
          : "That device then becomes you: your place here and in your other rooms, your past games, records and turn alerts go with it. This browser stops being you: its My games will no longer list them."),
        h("img.qr", { src: qr.svg, alt: "QR code of the link" }),
        h("input", { type: "text", readonly: true, value: link, "aria-label": "Link to your place", onfocus: (e) => e.target.select() }));
    } catch (e) {
      toast(e.message, "error");
    }
  };
  box.append(h("button.small", { onclick: show }, "Continue on another device"));
  return box;
}

/** The lobby: invite, seats, house rules, start. */
export function lobbyPanel(ctx, games) {
  const { room, you, socket } = ctx;
  const cmd = (c) => socket.cmd(c).catch((e) => toast(e.message, "error"));
  const link = inviteLink(room.code);
  const linkInput = h("input", { type: "text", readonly: true, value: link, "aria-label": "Invite link", onfocus: (e) => e.target.select() });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      toast("Invite link copied.");
    } catch {
      linkInput.select();
      toast("Select the link and copy it.");
    }
  };
  const game = games?.find((g) => g.name === room.game);
  const seated = room.seats.filter((s) => s).length;
  const canStart = room.game === "bigtwo" ? seated >= 1 : seated >= room.min_seats;
  const opts = describeOptions(game, room.options);
  const hostBox = h("div");
  if (you.host && room.status !== "playing") {
    const err = h("p.err");
    let form = null;
    let picked = room.game;
    const sel = h("select", { id: "set-game", "aria-label": "Game" },
      (games || []).map((g) => h("option", { value: g.name, selected: g.name === room.game }, g.title)));
    const box = h("div");
    const build = () => {
      const g = games?.find((x) => x.name === picked);
      if (!g) return;
      // the room's game opens at its saved rules, another game at its defaults
      form = optionsForm(g, picked === room.game ? room.options || {} : {});
      mount(box, form.el);
    };
    sel.addEventListener("change", () => {
      picked = sel.value;
      build();
    });
    build();
    hostBox.append(
      h("details.hostrules", h("summary", "Change game or house rules"),
        h("label.field", { for: "set-game" }, h("span.label", "Game"), sel),
        box, err,
        h("button", {
          onclick: async () => {
            err.textContent = "";
            try {
              // the saved rules with what the host changed (set_game replaces them all)
              const options = picked === room.game ? { ...(room.options || {}), ...form.changed() } : form.values();
              await socket.cmd({ type: "set_game", game: picked, options });
              toast("House rules saved.");
            } catch (e) {
              err.textContent = e.message;
            }
          },
        }, "Save house rules"),
      ),
    );
  }
  if (you.host) hostBox.append(settingsEditor(ctx));
  const startBtn = you.host
    ? h("button.primary.big", {
        id: "start",
        disabled: !canStart,
        onclick: () => cmd({ type: room.status === "finished" ? "rematch" : "start" }),
      }, room.status === "finished" ? "Rematch" : "Start game")
    : null;
  const freeSeats = room.seats.filter((s) => !s).length;
  return h("div.lobbypanel",
    h("div.invite",
      h("span", "Room"), h("code", { "aria-label": "Room code" }, room.code),
      linkInput,
      h("button", { onclick: copy, id: "copy-link" }, "Copy invite link"),
    ),
    isLocalLink(link)
      ? h("p.warn.localwarn", { role: "note" },
          `This link points at this computer (${new URL(link).host}), so it only opens here. `
          + "To let friends in, start the server with HOST=0.0.0.0 and set PUBLIC_URL to the address they reach it at (see the README, \"Let friends in\").")
      : null,
    h("p.rules-row", rulesLink(room.game, `How to play ${game?.title || room.title || room.game}`)),
    h("h3", { style: { marginTop: "14px" } }, `${room.title || room.game} · seats`),
    seatsPanel(ctx),
    opts.length ? h("ul.optsummary", opts.map((o) => h("li", o))) : h("p.muted", "Standard rules."),
    you.seat === null && room.status !== "playing" ? h("p.muted", "You are watching. Pick an empty seat to play.") : null,
    you.seat !== null && room.status !== "playing"
      ? h("button.small", { onclick: () => cmd({ type: "sit", seat: null }) }, "Stand up and watch")
      : null,
    room.status === "playing"
      ? h("p.muted", you.host ? "A game is on. Between games you can change seats, bots and house rules here." : "A game is on.")
      : you.host
      ? h("div.row", { style: { marginTop: "12px" } },
          startBtn,
          room.status === "finished" ? h("button", { onclick: () => cmd({ type: "start" }) }, "New game with these seats") : null,
          freeSeats ? addBotControl(cmd) : null,
        )
      : h("p.muted", "Waiting for the host to start."),
    you.host && !canStart && room.status !== "playing" ? h("p.muted", `${room.title} needs at least ${room.min_seats} players.`) : null,
    hostBox,
  );
}

/** "Add a bot" with the level it plays at (easy, normal or strong). */
function addBotControl(cmd) {
  const level = h("select", { id: "bot-level", "aria-label": "Bot level" },
    BOT_LEVELS.map(([v, label]) => h("option", { value: v, selected: v === botLevel() }, label)));
  level.addEventListener("change", () => localStorage.setItem(BOT_LEVEL_KEY, level.value));
  return h("span.addbot",
    h("button", { id: "add-bot", onclick: () => cmd({ type: "add_bot", level: level.value }) }, "Add a bot"),
    level);
}

function settingsEditor(ctx) {
  const { room, socket } = ctx;
  const box = h("details.hostrules", h("summary", "Room settings"));
  const err = h("p.err");
  loadSettingsSchema().then((info) => {
    // opened at the room's stored values; only what the host changes is sent
    const f = settingsForm(info, room.settings || {}, room.game);
    if (!f) return;
    box.append(f.el, err, h("button", {
      onclick: async () => {
        err.textContent = "";
        try {
          const changed = f.changed();
          if (!Object.keys(changed).length) {
            toast("Nothing changed.");
            return;
          }
          await socket.cmd({ type: "set_settings", settings: changed });
          toast("Room settings saved.");
        } catch (e) {
          err.textContent = e.message;
        }
      },
    }, "Save settings"));
  });
  return box;
}
