// The game log: one line per event, built by the table module (game events)
// or here (room events). Lines are text only.
import { h } from "./dom.js";

export function logPanel() {
  const lines = [];
  const list = h("ol.lines", { "aria-live": "polite", "aria-label": "Game log" });
  const el = h("div.log", list);
  // The log follows its newest line unless the reader scrolled back. A log
  // drawn while hidden (a phone's closed panel, after a refresh) has no
  // height to scroll yet: once it is shown, or grows, it goes to its end.
  let follow = true;
  const scroll = () => {
    list.scrollTop = list.scrollHeight;
  };
  list.addEventListener("scroll", () => {
    if (list.clientHeight) follow = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  });
  if (typeof ResizeObserver === "function") {
    new ResizeObserver(() => {
      if (follow) scroll();
    }).observe(list);
  }
  return {
    el,
    lines,
    /** `v`: the room version of the event the line tells (to log it once). */
    add(text, cls = "", keep = true, v = undefined) {
      if (keep) lines.push(typeof v === "number" ? { text, cls, v } : { text, cls });
      if (lines.length > 400) lines.shift();
      list.append(h("li", { class: cls || null }, text));
      if (list.children.length > 400) list.firstChild.remove();
      scroll();
    },
    /** Older lines, above the others (the log's "Earlier moves"); the
     * newest stay in view. */
    prepend(older) {
      older = older.slice(Math.max(0, older.length - (400 - lines.length)));
      if (!older.length) return;
      lines.unshift(...older);
      const first = list.querySelector("li");
      for (const { text, cls } of older) list.insertBefore(h("li", { class: cls || null }, text), first);
    },
    scroll,
  };
}

const WHAT = {
  joined: (n) => `${n} joined the room.`,
  left: (n) => `${n} left the room.`,
  kicked: (n) => `${n} was removed by the host.`,
  let_in: (n, e) => `${e.by} let ${n} back into the room.`,
  sat: (n, e) => (e.seat === null || e.seat === undefined ? `${n} is watching.` : `${n} sat in seat ${e.seat + 1}.`),
  host: (n, e) => (e.reason === "away" ? `${n} is now the host (the host was away).` : `${n} is now the host.`),
  bot_added: (n, e) => `${n} (${e.level ? `${e.level} ` : ""}bot) sat down.`,
  bot_removed: (n) => `${n} (bot) left.`,
  auto_on: (n, e) =>
    e.turn ? `Time ran out: a bot plays ${n}'s turn.`
      : e.by ? `${e.by} handed ${n}'s seat to a bot until ${n} is back.`
        : e.reason === "away" ? `${n} has been away too long: a bot plays for them until they are back.`
          : `A bot is playing for ${n}.`,
  auto_off: (n) => `${n} takes their seat back from the bot.`,
  autoplay_on: (n) => `${n} lets a bot play their turns until this hand ends.`,
  autoplay_off: (n, e) => (e.reason === "hand_over" ? `The hand is over: ${n} plays their own turns again.` : `${n} plays their own turns again.`),
  away: (n) => `${n} is away.`,
  moved: (n, e) => (e.by ? `${n}'s seat moved to a new device with ${e.by}'s seat link.` : `${n} continues on another device.`),
  link_made: (n, e) => `${e.by} made a link for ${n}'s seat.`,
  back: (n) => `${n} is back.`,
  game_set: () => "The host changed the game or house rules.",
  settings: () => "The host changed the room settings.",
  started: () => null,
  finished: () => "The game is over.",
};

export function roomEventText(e) {
  const name = e.name || (e.seat !== null && e.seat !== undefined ? `Seat ${e.seat + 1}` : "Someone");
  const f = WHAT[e.what];
  return f ? f(name, e) : null;
}
