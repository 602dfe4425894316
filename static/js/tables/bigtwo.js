// Big Two table: the trick in the middle, passes and places on the seats,
// pick cards and play or pass. The server lists every legal play, so the
// hand lights up only the cards that can still complete a legal play with
// what is already picked.
import { h } from "../dom.js";
import { moving } from "../motion.js";
import { cardEl, cardsText, sortCards } from "../cards.js";
import {
  statusBar, opponentsRow, handArea, actionBar, btn, send, isMyTurn, pruneSelection,
  selectedCodes, turnPrompt, shownHands,
  myArea,
} from "./common.js";

const CATEGORY = {
  single: "single", pair: "pair", triple: "three of a kind", straight: "straight",
  flush: "flush", full_house: "full house", four_of_a_kind: "four of a kind",
  straight_flush: "straight flush",
};
const PLACE = ["1st", "2nd", "3rd", "4th"];

/** Plays (card lists) from the legal actions that contain every picked card. */
export function playsWith(legal, picked) {
  return (legal || [])
    .filter((a) => a.type === "play")
    .map((a) => a.cards)
    .filter((cards) => picked.every((c) => cards.includes(c)));
}

const sameSet = (a, b) => a.length === b.length && a.every((c) => b.includes(c));

export function render(ctx) {
  const g = ctx.game;
  const hand = g.hand || [];
  if (ctx.ui.sort !== "rank" && ctx.ui.sort !== "suit") ctx.ui.sort = "rank";
  pruneSelection(ctx, hand);
  const picked = selectedCodes(ctx);
  const mine = isMyTurn(ctx);
  const fits = mine ? playsWith(ctx.legal, picked) : [];
  const canComplete = new Set(fits.flat());
  const exact = fits.some((cards) => sameSet(cards, picked));
  const canPass = mine && (ctx.legal || []).some((a) => a.type === "pass");

  const placeOf = (s) => {
    const i = (g.places || []).indexOf(s);
    return i >= 0 ? PLACE[i] : null;
  };
  const extraFor = (s) => ({
    extra: h("span.tags",
      placeOf(s) ? h("span.chip.place", placeOf(s)) : null,
      (g.passed || []).includes(s) ? h("span.chip.passed", "passed") : null,
      g.trick && g.trick.seat === s ? h("span.chip.down", "on top") : null,
    ),
  });

  // the view keeps the last play after the table clears (so it survives a refresh)
  const lastPlay = g.last_play || [...(ctx.events || [])].reverse().find((e) => e.type === "played");
  const trick = g.trick
    ? moving(h("div.trick", { "aria-label": `On the table: ${cardsText(g.trick.cards)} by ${ctx.name(g.trick.seat)}` },
        h("div.cards", sortCards(g.trick.cards, "rank", "bigtwo").map((c) => cardEl(c))),
        h("div", h("span.who", ctx.name(g.trick.seat)), ` · ${CATEGORY[g.trick.category] || g.trick.category}`)),
      `${g.trick.seat}:${g.trick.cards.join(",")}`)
    : h("div.trick.cleared",
        lastPlay && !g.over
          ? h("div.cards.faded", { "aria-hidden": "true" }, sortCards(lastPlay.cards, "rank", "bigtwo").map((c) => cardEl(c)))
          : null,
        h("div.hint-box", g.over ? "Game over" : g.control
          ? `${g.turn === ctx.me ? "You have" : `${ctx.name(g.turn)} has`} control: lead any combination${g.must_include ? " (it must include the 3♣)" : ""}.`
          : ""));

  let prompt = turnPrompt(ctx, g.control ? "Your lead" : "Beat it or pass", null);
  let hint = "";
  if (mine) {
    if (g.must_include) hint = "The first play must include the 3 of clubs.";
    else if (g.control) hint = "Lead anything: a single, pair, triple or five-card hand.";
    else hint = `Play a higher ${CATEGORY[g.trick?.category] || "combination"}${g.trick?.size === 5 ? " (or a stronger five-card hand)" : ""}, or pass.`;
    if (picked.length && !exact) hint = canComplete.size ? "Keep picking: the lit cards can complete a play." : "These cards do not make a play that beats the table.";
    if (exact) hint = `Ready: ${cardsText(picked)}.`;
  }

  const me = ctx.me;
  const actions = mine
    ? actionBar(ctx, [
        btn("Play", () => send(ctx, { type: "play", cards: picked }), { primary: true, disabled: !picked.length, key: "play", ready: exact }),
        btn("Pass", () => send(ctx, { type: "pass" }), { disabled: !canPass, key: "pass", title: canPass ? null : "You have control: you must lead" }),
      ], hint)
    : actionBar(ctx, [], g.over ? "" : me === null ? "You are watching." : placeOf(me) ? `You finished ${placeOf(me)}.` : "Wait for your turn.");

  return h("div.tablebox.bigtwo",
    statusBar(ctx, { title: "Big Two", detail: `${g.played_count || 0} cards played`, prompt, now: nowText(ctx, placeOf), guide: guideFor(ctx, mine) }),
    opponentsRow(ctx, extraFor),
    h("div.center", trick),
    g.over ? shownHands(ctx) : null,
    myArea(ctx, me, { mine, badge: extraFor(me), watching: actions },
      actions,
      handArea(ctx, hand, {
        game: "bigtwo",
        // Picks may be made ahead, while the others play.
        selectable: !ctx.readonly && !g.over && !placeOf(me),
        playable: mine ? (c) => canComplete.has(c) : null,
        dimOthers: mine,
      })),
  );
}

/** "What can I do now?" at the Big Two table. */
export function nowText(ctx, placeOf = () => null) {
  const g = ctx.game;
  const me = ctx.me;
  if (g.over) return "The game is over: see the places.";
  const who = ctx.seatName(g.turn);
  const three = g.must_include ? " (it must include the 3♣)" : "";
  if (g.turn !== me || me === null) {
    const done = me !== null && placeOf(me) ? `You finished ${placeOf(me)}. ` : "";
    return `${done}Waiting for ${who} to ${g.control ? "lead" : "play or pass"}.`;
  }
  if (g.control) return `Your lead: play any single, pair, three of a kind or five-card hand${three}.`;
  const what = CATEGORY[g.trick?.category] || "play";
  return `Your turn: beat the ${what} on the table with a higher one, or pass.`;
}

function guideFor(ctx, mine) {
  const g = ctx.game;
  if (!mine || g.over) return null;
  if (g.control) return { key: "lead", text: "You lead: play any single, pair, three of a kind or five-card hand. The others must follow with the same kind, higher. Twos are the highest rank, spades the highest suit." };
  return { key: "follow", text: "Beat the play on the table with a higher one of the same kind and size, or pass. When everyone else passes, the last player to play leads anew." };
}

export function describe(e, ctx) {
  const who = ctx.name(e.seat);
  switch (e.type) {
    case "played":
      return `${who} played ${cardsText(e.cards)} (${CATEGORY[e.category] || e.category})${e.left === 1 ? " — one card left!" : ""}`;
    case "passed":
      return `${who} passed.`;
    case "went_out":
      return { text: `${who} went out: ${PLACE[e.place - 1] || e.place} place.`, cls: "big" };
    case "control":
      return `${who} ${e.seat === ctx.me ? "have" : "has"} control.`;
    case "game_over":
      return { text: "Game over.", cls: "big" };
    default:
      return null;
  }
}

// A Big Two score is the place itself, which the result already shows.
export const scoreText = () => null;
