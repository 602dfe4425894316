// Possum table: the top of the pile and its value, the draw pile, and a hand
// where cards are picked in the order they go on the pile (numbered badges;
// the last picked becomes the new top).
import { h } from "../dom.js";
import { moving } from "../motion.js";
import { cardEl, cardsText, parse } from "../cards.js";
import {
  statusBar, opponentsRow, handArea, actionBar, btn, send, isMyTurn, pruneSelection,
  selectedCodes, turnPrompt, stackEl, shownHands, sameCards, completing,
  myArea,
} from "./common.js";

const PATTERN = {
  same: "same value",
  sum: "adds up",
  plus_top: "bridges the top",
  product: "multiplies",
  times_top: "times the top",
};

const value = (code) => parse(code).value;
const an = (n) => ([8, 11, 18].includes(n) ? "an" : "a");

function rulesText(top, options) {
  const t = value(top);
  const parts = [
    options?.multi ? `any number of ${t}s` : `${an(t)} ${t}`,
    options?.multi ? `two or three cards adding to ${t}` : `two cards adding to ${t}`,
    options?.multi ? `cards x (one or two) and y with x + ${t} = y` : `x and y with x + ${t} = y`,
  ];
  if (options?.multiply) parts.push(`two cards multiplying to ${t}`, `x and y with x × ${t} = y`);
  return `On ${an(t)} ${t}, play ${parts.join("; or ")}.`;
}

export function render(ctx) {
  const g = ctx.game;
  const hand = g.hand || [];
  pruneSelection(ctx, hand);
  const picked = selectedCodes(ctx);
  const mine = isMyTurn(ctx);
  const plays = mine ? (ctx.legal || []).filter((a) => a.type === "play").map((a) => a.cards) : [];
  const canDraw = mine && (ctx.legal || []).some((a) => a.type === "draw");
  const lit = completing(plays, picked);
  const exact = plays.some((p) => sameCards(p, picked));

  let hint = "";
  if (mine) {
    if (canDraw) hint = `You cannot play on the ${cardsText([g.top])}: draw (${g.draws_taken} of ${g.draw_limit} drawn this turn).`;
    else if (!picked.length) hint = "Pick the cards in the order they go on the pile; the last one becomes the new top.";
    else if (exact) hint = `Ready: ${picked.map((c, i) => `${i + 1}. ${cardsText([c])}`).join("  ")} — the ${cardsText([picked[picked.length - 1]])} will be on top.`;
    else hint = lit.size ? "Keep picking: the lit cards complete a play." : "These cards make no play on this top card.";
  }
  const buttons = mine
    ? [
        canDraw ? null : btn("Play", () => send(ctx, { type: "play", cards: picked }), { primary: true, disabled: !picked.length, key: "play", ready: exact }),
        btn(g.draws_taken ? "Draw again" : "Draw", () => send(ctx, { type: "draw" }), { primary: canDraw, disabled: !canDraw, key: "draw", title: canDraw ? null : "You can play, so you must" }),
      ]
    : [];

  const center = h("div.center",
    h("div.piles",
      stackEl(g.draw_count, {
        label: "Draw pile",
        onclick: canDraw ? () => send(ctx, { type: "draw" }) : undefined,
        playable: canDraw,
      }),
      h("div.pile.discard.possumtop", { role: "img", "aria-label": `Top of the pile: ${cardsText([g.top])}, value ${value(g.top)}` },
        h("div.stackcards", g.pile_count > 1 ? h("div.under.face") : null, moving(cardEl(g.top, { extra: "lg" }), `${g.pile_count}:${g.top}`)),
        h("span.pile-label", `Pile · ${g.pile_count}`)),
      h("div.topvalue", { "aria-hidden": "true" }, h("span.big", String(value(g.top))), h("span", "to answer")),
    ),
    h("p.rulehint", rulesText(g.top, g.options)),
  );
  const extraFor = (s) => ({
    extra: h("span.tags", g.winner === s ? h("span.chip.place", "won") : null),
  });
  const me = ctx.me;
  return h("div.tablebox.possum",
    statusBar(ctx, {
      title: "Possum",
      detail: g.stalled ? "stalled" : `${g.draw_count} to draw`,
      prompt: g.over ? (g.stalled ? "Game over: nobody can move" : "Game over") : turnPrompt(ctx, canDraw ? "Your turn: draw" : "Your turn: play", null),
      now: nowText(ctx, canDraw),
      guide: mine && !g.over ? (canDraw
        ? { key: "draw", text: "No card in your hand answers the top card, so you draw; a card you draw that answers it can be played at once." }
        : { key: "play", text: "Answer the top card's number: the rule under the pile says which cards do. Pick them in the order they go down; the last one is the new top. First to empty their hand wins." }) : null,
    }),
    opponentsRow(ctx, extraFor),
    center,
    g.over ? shownHands(ctx) : null,
    myArea(ctx, me, { mine, badge: extraFor(me), watching: actionBar(ctx, [], "You are watching.") },
          actionBar(ctx, buttons, mine ? hint : g.over ? "" : "Wait for your turn."),
          handArea(ctx, hand, {
            game: "possum",
            selectable: mine && !canDraw,
            ordered: true,
            playable: mine && !canDraw ? (c) => lit.has(c) : null,
            dimOthers: mine && !canDraw,
          })),
  );
}

/** "What can I do now?" at the Possum table. */
export function nowText(ctx, canDraw) {
  const g = ctx.game;
  const me = ctx.me;
  if (g.over) return g.stalled ? "The game is over: nobody could move." : "The game is over.";
  const top = cardsText([g.top]);
  if (g.turn !== me || me === null) return `Waiting for ${ctx.seatName(g.turn)} to play on the ${top} or draw.`;
  if (canDraw) return `Your turn: nothing in your hand answers the ${top}: draw (${g.draws_taken} of ${g.draw_limit} drawn).`;
  return `Your turn: play cards that answer the ${top} (the rule is under the pile).`;
}

export function describe(e, ctx) {
  const who = ctx.name(e.seat);
  switch (e.type) {
    case "played":
      return `${who} played ${cardsText(e.cards)} (${PATTERN[e.pattern] || e.pattern}); ${cardsText([e.top])} on top.${e.left === 1 ? " One card left!" : ""}`;
    case "drew":
      return e.seat === ctx.me ? null : `${who} drew a card.`; // drew_card tells you which
    case "drew_card":
      return { text: `You drew ${cardsText([e.card])}.`, cls: "me" };
    case "turn_ended":
      return `${who} could not play.`;
    case "skipped":
      return `${who} ${e.seat === ctx.me ? "are" : "is"} skipped (no play, nothing to draw).`;
    case "reshuffled":
      return { text: "The pile was shuffled into a new draw pile.", cls: "sys" };
    case "went_out":
      return { text: `${who} went out!`, cls: "big" };
    case "game_over":
      return { text: e.stalled ? "Game over: nobody can move." : "Game over.", cls: "big" };
    default:
      return null;
  }
}

export const scoreText = (n) => `${n} card${n === 1 ? "" : "s"} left`;
