// Pieces every table uses: the status bar, seats around the felt, the hand
// (sortable, selectable, keyboard friendly), the stack and pile, the action
// bar with the server's last refusal.
import { h } from "../dom.js";
import { cardEl, backsFan, sortCards, cardName } from "../cards.js";
import { countdown, localTimer } from "../timer.js";
import { nowRow, guideHint } from "../guide.js";
import { moving } from "../motion.js";
import { icon } from "../icons.js";

// ---- selection: picked hand cards as "code#n" (n-th copy of that code) ----

/** The hand with each card's key ("10H#0", "10H#1" for a second copy). */
export function keyed(cards) {
  const seen = {};
  return cards.map((code) => {
    const n = seen[code] || 0;
    seen[code] = n + 1;
    return { code, key: `${code}#${n}` };
  });
}

/** Drop picks that are no longer in the hand (after a play, a new deal). */
export function pruneSelection(ctx, hand) {
  const keys = new Set(keyed(hand || []).map((c) => c.key));
  ctx.ui.selected = (ctx.ui.selected || []).filter((k) => keys.has(k));
  return ctx.ui.selected;
}

export const selectedCodes = (ctx) => (ctx.ui.selected || []).map((k) => k.split("#")[0]);

export function toggle(ctx, key) {
  const sel = ctx.ui.selected || (ctx.ui.selected = []);
  const i = sel.indexOf(key);
  if (i >= 0) sel.splice(i, 1);
  else sel.push(key);
  ctx.ui.error = null;
}

export function clearSelection(ctx) {
  ctx.ui.selected = [];
}

// ---- seats ----

export function isMyTurn(ctx) {
  if (ctx.readonly) return false;
  return ctx.me !== null && (ctx.game.to_act || []).includes(ctx.me);
}

/** Seats other than mine, clockwise from my left (spectators: from seat 0). */
export function othersInOrder(ctx) {
  const n = ctx.game.seats;
  const start = ctx.me === null ? 0 : ctx.me + 1;
  const out = [];
  for (let i = 0; i < n; i++) {
    const s = (start + i) % n;
    if (s !== ctx.me) out.push(s);
  }
  return out;
}

/**
 * Away: since when, and a countdown to when a bot takes the seat over (or,
 * without auto_bot, to when anyone seated may hand it to one).
 */
export function awayBadge(room, info) {
  if (!info || info.bot || info.connected || !info.grace_ends_ms) return null;
  const since = new Date(info.away_since_ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const left = info.grace_ends_ms - Date.now();
  const title = `Away since ${since}`;
  if (left <= 0 || info.auto) return h("span.chip.away", { title }, "away");
  const label = room.settings?.auto_bot === false ? "away" : "away · bot in";
  return h("span.chip.away", { title }, countdown(localTimer({ deadline_ms: info.grace_ends_ms }), label));
}

export function seatBadge(ctx, seat, { extra = null, count = null, showFan = true, cls = "" } = {}) {
  const info = ctx.room.seats[seat];
  const g = ctx.game;
  const acting = (g.to_act || []).includes(seat);
  const turn = g.turn === seat;
  const n = count ?? g.counts?.[seat] ?? 0;
  const dot = info?.bot ? "bot" : info?.connected ? "on" : "off";
  const timer = ctx.timer && ctx.timer.seat === seat ? countdown(ctx.timer, "") : null;
  const label = `${ctx.seatName(seat)}${seat === ctx.me ? " (you)" : ""}, ${n} card${n === 1 ? "" : "s"}${turn ? ", to play" : ""}`;
  return h(`div.seat${cls ? `.${cls}` : ""}`, {
    class: [acting ? "acting" : "", turn ? "turn" : "", seat === ctx.me ? "mine" : ""].filter(Boolean).join(" ") || null,
    dataset: { seat },
    "aria-label": label,
    role: "group",
  },
  h("div.seat-head",
    h(`span.dot.${dot}`, { title: info?.bot ? `${info.level || "normal"} bot` : info?.connected ? "connected" : "away" }),
    h("span.seat-name", ctx.seatName(seat)),
    g.dealer === seat ? h("span.chip.dealer", { title: "Dealer" }, "D") : null,
    info?.auto ? h("span.chip.auto", { title: "A bot is playing this seat" }, "bot") : null,
    info?.autoplay
      ? h("span.chip.auto.autoplay", { title: "A bot plays this seat's turns until the hand ends, as its player asked" }, "autoplay")
      : null,
    info?.bot && info.level && info.level !== "normal"
      ? h("span.chip.level", { title: `A bot at the ${info.level} level` }, info.level)
      : null,
    awayBadge(ctx.room, info),
    timer,
  ),
  h("div.seat-body",
    showFan && n > 0 ? backsFan(n, 8) : null,
    h("span.count", { "aria-hidden": "true" }, String(n)),
    extra,
  ),
  lastMoveLine(ctx, seat));
}

/** What this seat did last, kept until its next move; the latest mover's
 * seat flashes once (not under prefers-reduced-motion). */
function lastMoveLine(ctx, seat) {
  const moves = ctx.lastMoves;
  const m = moves?.[seat];
  if (!m || seat === ctx.me) return null;
  const latest = Math.max(...Object.values(moves).map((x) => x.n)) === m.n;
  const who = `${ctx.name(seat)} `;
  const text = m.text.startsWith(who) ? m.text.slice(who.length) : m.text;
  return h("div.lastmove", { class: latest ? "latest" : null, title: m.text }, text.replace(/\.$/, ""));
}

/**
 * The other seats. With three or fewer they sit around the table on a wide
 * screen (my left, across, my right: play goes clockwise, to the left);
 * on a phone, and with more players, they sit in a row across the top.
 */
export function opponentsRow(ctx, extraFor = () => null) {
  const others = othersInOrder(ctx);
  const spots = { 1: ["top"], 2: ["left", "right"], 3: ["left", "top", "right"] }[others.length];
  return h(`div.opponents${spots ? ".around" : ""}`, others.map((s, i) => {
    const opts = extraFor(s) || {};
    return seatBadge(ctx, s, { ...opts, cls: [opts.cls, spots ? `pos-${spots[i]}` : ""].filter(Boolean).join(".") });
  }));
}

// ---- status bar ----

export function statusBar(ctx, { title, detail, prompt, now = null, guide = null }) {
  const mine = isMyTurn(ctx);
  // Posso's windows and the cut show their countdown on their own panels.
  // A moot cut's timer has no time: it shows nowhere.
  const own = ["posso_window", "posso_answer", "cut", "cut_moot"].includes(ctx.timer?.kind);
  const timer = ctx.timer && !own && (ctx.timer.seat === null || ctx.timer.seat === undefined || ctx.timer.seat === ctx.me)
    ? countdown(ctx.timer, TIMER_LABEL[ctx.timer.kind] || "")
    : null;
  // A first game's hint shares rows already there (static/js/guide.js).
  const hint = guide ? guideHint(ctx, ctx.room?.game, guide.key, guide.text) : null;
  return h(`div.statusbar${hint ? ".hinted" : ""}`,
    h("div.st-row",
      h("div.st-title", h("strong", title), detail ? h("span.muted-l", detail) : null),
      h("div.st-prompt", { class: mine ? "mine" : null, role: "status", "aria-live": "polite" }, prompt || ""),
      hint ? hint.controls : null,
      timer,
      ctx.soundToggle ? ctx.soundToggle() : null),
    nowRow(now, hint ? hint.text : null),
  );
}

const TIMER_LABEL = {
  posso_window: "Posso",
  posso_answer: "Answer",
  cut: "Cut",
  turn: "Turn",
};

export function turnPrompt(ctx, yours, theirs) {
  const g = ctx.game;
  if (g.over) return "Game over";
  if (isMyTurn(ctx)) return yours;
  const t = g.turn;
  if (t === null || t === undefined) return theirs || "";
  return theirs || `${ctx.seatName(t)} to play`;
}

// ---- the hand ----

/**
 * My hand. opts: {game, selectable, playable(code) -> bool, ordered (show
 * pick order), onPick(key), label, extraClass}.
 */
export function handArea(ctx, cards, opts = {}) {
  const game = opts.game || ctx.game.game;
  const sorted = ctx.ui.sort === "none" ? keyed(cards) : keyedSorted(cards, ctx.ui.sort, game);
  const sel = ctx.ui.selected || [];
  const row = h("div.hand", { role: "group", "aria-label": opts.label || `Your hand, ${cards.length} cards` });
  // Cards new since the last drawing ease in (the felt is redrawn whole).
  const before = ctx.ui.handKeys;
  ctx.ui.handKeys = new Set(sorted.map((x) => x.key));
  for (const { code, key } of sorted) {
    const i = sel.indexOf(key);
    const playable = opts.playable ? opts.playable(code) : false;
    const el = cardEl(code, {
      onclick: opts.selectable
        ? () => {
            toggle(ctx, key);
            if (opts.onPick) opts.onPick(key);
            ctx.rerender();
          }
        : undefined,
      selected: i >= 0,
      playable: playable && i < 0,
      dim: opts.playable && opts.dimOthers && !playable && i < 0,
      order: opts.ordered && i >= 0 ? i + 1 : null,
      wild: opts.isWild ? opts.isWild(code) : false,
      label: `${cardName(code)}${i >= 0 ? (opts.ordered ? `, picked ${i + 1}` : ", picked") : ""}`,
    });
    el.dataset.key = `hand:${key}`;
    if (before && !before.has(key)) el.classList.add("arrive");
    row.append(el);
  }
  // A deal (many cards at once) slides in one card after another.
  const arriving = [...row.querySelectorAll(".card.arrive")];
  if (arriving.length > 2) arriving.forEach((c, i) => { c.style.animationDelay = `${Math.min(i * 30, 600)}ms`; });
  if (!opts.selectable) for (const c of row.querySelectorAll(".card")) c.setAttribute("tabindex", "0");
  fitHand(row, sorted.length);
  const sorter = h("div.sorter", { role: "group", "aria-label": "Sort hand" },
    h("span.muted-l", "Sort:"),
    ["suit", "rank"].map((by) =>
      h("button.small", {
        "aria-pressed": String(ctx.ui.sort === by),
        dataset: { key: `sort:${by}` },
        onclick: () => ctx.setSort(by),
      }, by === "suit" ? "Suit" : "Rank")),
    sel.length ? h("button.small", { dataset: { key: "clear" }, onclick: () => { clearSelection(ctx); ctx.rerender(); } }, `Clear (${sel.length})`) : null,
  );
  return h(`div.handwrap${opts.extraClass ? `.${opts.extraClass}` : ""}`, sorter, row);
}

function keyedSorted(cards, by, game) {
  // Keys follow the cards' dealt order so a pick survives re-sorting.
  const ks = keyed(cards);
  const order = sortCards(cards, by, game);
  const pool = {};
  for (const k of ks) (pool[k.code] ||= []).push(k);
  return order.map((code) => pool[code].shift());
}

/** Overlap the cards just enough to fit the width; wrap to rows when too many. */
function layoutHand(row) {
  const n = Number(row.dataset.n);
  const w = row.clientWidth - 8;
  if (!w || !n) return;
  const cw = parseFloat(getComputedStyle(row).getPropertyValue("--hand-cw")) || 64;
  // Each card keeps at least this much showing (its index and a place to tap);
  // when a row cannot hold them all, the hand wraps into as many rows as needed.
  // A finger needs more than a mouse: on a narrow or touch screen every card
  // shows at least 44 px (and most of its face), so a tap lands on it.
  const narrow = w < 600 || window.matchMedia?.("(pointer: coarse)").matches;
  const minStep = narrow ? Math.max(44, cw * 0.74) : Math.max(24, cw * 0.42);
  const perRowMax = Math.max(1, Math.floor((w - cw) / minStep) + 1);
  const rows = Math.ceil(n / perRowMax);
  const perRow = Math.ceil(n / rows);
  const step = perRow > 1 ? Math.min(cw + 6, (w - cw) / (perRow - 1)) : cw;
  row.classList.toggle("wrap", rows > 1);
  row.style.setProperty("--step", `${Math.floor(step)}px`);
}

const handObserver = window.ResizeObserver
  ? new ResizeObserver((entries) => {
      for (const e of entries) if (e.target.isConnected) layoutHand(e.target);
    })
  : null;

function fitHand(row, n) {
  row.dataset.n = String(n);
  // A redraw patches the live row: it keeps its measured spacing (which this
  // new row cannot know yet) until the next frame measures again, so no card
  // moves under a finger in between.
  row._beforePatch = (live) => {
    const step = live.style.getPropertyValue("--step");
    if (step) row.style.setProperty("--step", step);
    if (live.classList.contains("wrap")) row.classList.add("wrap");
  };
  requestAnimationFrame(() => {
    // The rows on the page now (the patched live ones), not this drawing's.
    const rows = document.querySelectorAll(".hand[data-n]");
    for (const r of rows) layoutHand(r);
    if (handObserver) {
      handObserver.disconnect();
      for (const r of rows) handObserver.observe(r);
    }
  });
}

// ---- piles ----

export function stackEl(count, { onclick, label = "Stack", hint, key = "stack", playable } = {}) {
  const inner = count > 0 ? cardEl(null, { label: `${label}, ${count} cards` }) : h("div.slot", label);
  const attrs = { "aria-label": `${label}: ${count} cards${hint ? `. ${hint}` : ""}`, dataset: { key } };
  const el = onclick
    ? h("button.pile.stack", { ...attrs, onclick, class: playable ? "can" : null, type: "button" })
    : h("div.pile.stack", { ...attrs, role: "img" });
  el.append(h("div.stackcards", count > 1 ? h("div.under") : null, count > 2 ? h("div.under.u2") : null, inner));
  el.append(h("span.pile-label", `${label} · ${count}`));
  return el;
}

export function pileEl(top, { onclick, label = "Pile", count, key = "pile", beneath = [], playable } = {}) {
  const el = onclick
    ? h("button.pile.discard", { "aria-label": `${label}: ${top ? cardName(top) : "empty"}`, onclick, dataset: { key }, class: playable ? "can" : null, type: "button" })
    : h("div.pile.discard", { "aria-label": `${label}: ${top ? cardName(top) : "empty"}`, role: "img", dataset: { key } });
  const stack = h("div.stackcards");
  for (const b of beneath) stack.append(cardEl(b, { extra: "beneath" }));
  // the card just put on the pile lands there (static/js/motion.js)
  stack.append(top ? moving(cardEl(top), `${count}:${top}`) : h("div.slot", "empty"));
  el.append(stack, h("span.pile-label", count !== undefined ? `${label} · ${count}` : label));
  return el;
}

// ---- actions ----

/** The row of buttons and the message line (server refusals stay until the next move). */
/** The seated player's own area: their badge, then what the table puts under it
 * (questions, actions, the hand); a spectator gets `watching` instead. */
export function myArea(ctx, me, { mine, badge = {}, watching = null }, ...children) {
  if (me === null) return watching;
  return h(`div.mearea${mine ? ".turn" : ""}`,
    h("div.mehead", seatBadge(ctx, me, { ...badge, showFan: false, cls: "compact" }), autoplayToggle(ctx, me)),
    ...children);
}

/** "Play my turns this hand": the normal bot plays my turns until the hand
 * ends (a game of one deal: until it ends); one tap takes them back. The
 * server holds it (room.seats[me].autoplay), so every tab shows the same. */
export function autoplayToggle(ctx, me) {
  if (ctx.readonly || ctx.room.status !== "playing" || !ctx.cmd) return null;
  const on = Boolean(ctx.room.seats[me]?.autoplay);
  const label = on ? "Take my turns back" : "Play my turns this hand";
  return h("button.small.autoplay", {
    type: "button",
    "aria-pressed": String(on),
    class: on ? "on" : null,
    dataset: { key: "autoplay" },
    title: on
      ? "A bot is playing your turns until this hand ends. Tap to play them yourself again."
      : "Let the normal bot play your turns until this hand ends; tap again to take them back.",
    onclick: () => ctx.cmd({ type: "autoplay", on: !on }).catch(() => {}),
    "aria-label": label,
  }, icon("bot", label), h("span.autoplay-text", label));
}

export function actionBar(ctx, buttons, hint) {
  const msg = h("p.actmsg", { role: "status", "aria-live": "polite", class: ctx.ui.error ? "error" : null }, ctx.ui.error || hint || "");
  return h("div.actions", h("div.btns", buttons.filter(Boolean)), msg);
}

export function btn(label, onclick, { primary = false, disabled = false, key, title, cls = "", ready } = {}) {
  return h(`button${primary ? ".primary" : ""}${cls ? `.${cls}` : ""}`, {
    type: "button",
    disabled,
    title: title || null,
    // data-ready: the picked cards make exactly a legal play (tests read it too)
    dataset: { key: key || `btn:${label}`, ...(ready === undefined ? {} : { ready: String(ready) }) },
    onclick: (e) => {
      if (disabled) return;
      onclick(e);
    },
  }, label);
}

/** Run an action; on success clear the picks. Errors are already shown. */
export function send(ctx, action, { keepSelection = false } = {}) {
  return ctx.act(action).then(
    () => {
      if (!keepSelection) clearSelection(ctx);
      ctx.rerender();
    },
    () => ctx.rerender(),
  );
}

/** Every card code appearing in the legal actions of the given types. */
export function legalCards(ctx, types) {
  const out = new Set();
  for (const a of ctx.legal || []) {
    if (types && !types.includes(a.type)) continue;
    if (a.card) out.add(a.card);
    for (const c of a.cards || []) out.add(c);
    for (const m of a.melds || []) for (const c of m.cards || []) out.add(c);
  }
  return out;
}

export const hasLegal = (ctx, type) => (ctx.legal || []).some((a) => a.type === type);

/** Final hands, shown to everyone when the game is over. */
export function shownHands(ctx) {
  const g = ctx.game;
  if (!g.over || !g.hands) return null;
  return h("div.shown",
    h("h3", "Hands at the end"),
    g.hands.map((hand, s) =>
      h("div.shown-row", h("span.seat-name", ctx.seatName(s)),
        h("div.mini", hand.length ? sortCards(hand, "suit", g.game).map((c) => cardEl(c, { extra: "xs" })) : h("span.muted-l", "no cards")))),
  );
}

// ---- multisets of card codes (multi-deck games repeat codes) ----

function counts(list) {
  const m = new Map();
  for (const c of list) m.set(c, (m.get(c) || 0) + 1);
  return m;
}

/** Does `big` hold every card of `small` (with repeats)? */
export function containsAll(big, small) {
  const m = counts(big);
  for (const c of small) {
    const n = m.get(c) || 0;
    if (!n) return false;
    m.set(c, n - 1);
  }
  return true;
}

export const sameCards = (a, b) => a.length === b.length && containsAll(a, b);

/** Cards that appear in some action's card list holding all of `picked`. */
export function completing(lists, picked) {
  const out = new Set();
  for (const l of lists) if (containsAll(l, picked)) for (const c of l) out.add(c);
  return out;
}
