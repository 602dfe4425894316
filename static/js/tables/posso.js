// Posso table. A hand goes: (cut) -> deal -> turns of draw / go down / play
// on / discard, with a Posso window after every discard. The player arranges
// their own melds to go down (pick cards, make a set or a run, repeat), plays
// on any meld's ends, swaps wilds out of runs, calls or answers Posso, and
// cuts the deck blind along its edge. The server judges everything; refusals
// show its message.
import { h, toast } from "../dom.js";
import { cardEl, cardsText } from "../cards.js";
import { sheetEl, normalizeSheet, requirementText } from "../sheet.js";
import {
  statusBar, handArea, actionBar, btn, send, isMyTurn, pruneSelection, selectedCodes,
  seatBadge, stackEl, pileEl, shownHands, keyed,
  myArea,
} from "./common.js";
import { possoPanel, cutPanel, lastHandPanel } from "./posso-panels.js";
import { meldsArea, stage, stageable, meldKinds, goDown, suggest, stagingArea, playHint, litCards } from "./posso-melds.js";
import { isWild } from "./posso-runs.js";
import { askedAboutPosso, syncQuiet, notAskedNote, rebuildsLeft } from "./posso-quiet.js";
import { names } from "../guide.js";

export { arrangeRun, arrangeOnRun } from "./posso-runs.js";

// ---- the table ----

// Drawing keeps the cards picked ahead (while the others played): they were
// chosen for this turn. Only a discard or a meld uses them up.
const KEEP_PICKS = { keepSelection: true };

export function render(ctx) {
  const g = ctx.game;
  const ui = ctx.ui;
  const hand = g.hand || [];
  // A new hand (or the end of one) clears half-made plans.
  if (ui.handNo !== g.hand_no) {
    ui.handNo = g.hand_no;
    ui.staged = [];
    ui.selected = [];
    ui.handKeys = new Set(); // a new deal: every card in the hand arrives
  }
  ui.staged = (ui.staged || []).filter((m) => m.keys.every((k) => keyed(hand).some((x) => x.key === k)));
  const stagedKeys = new Set(ui.staged.flatMap((m) => m.keys));
  pruneSelection(ctx, hand);
  ui.selected = ui.selected.filter((k) => !stagedKeys.has(k));
  const picked = selectedCodes(ctx);
  const me = ctx.me;
  const mine = isMyTurn(ctx);
  const legal = ctx.legal || [];
  const has = (t) => legal.some((a) => a.type === t);
  const down = me !== null && g.down?.[me];
  syncQuiet(ctx);

  const parts = [statusBar(ctx, { title: "Posso", detail: detailText(g), prompt: promptText(ctx), now: nowText(ctx), guide: guideFor(ctx) })];
  // The last hand's results come first, under the status bar: below the
  // table they lay behind the hand panel (and its next question).
  // Until the new hand's first discard (the cut, the deal, the upturn's
  // window, the first draw): then it closes by itself, so it never pushes
  // the pile and the melds down for the rest of the hand.
  const early = (g.pile_size ?? 0) <= 1 && !(g.melds || []).length;
  if (g.last_hand && ui.lastSeen !== g.last_hand.hand && !g.over && early) parts.push(lastHandPanel(ctx));
  // the game over, everyone's hand first: what the end is about
  if (g.over) parts.push(shownHands(ctx));
  parts.push(h("div.opponents", ringOrder(ctx).map((pos) => seatOrPhantom(ctx, pos))));

  // ---- centre: piles, Posso/cut panels, melds ----
  const center = h("div.center");
  const canStack = mine && legal.some((a) => a.type === "draw" && a.source === "stack");
  const canPile = mine && legal.some((a) => a.type === "draw" && a.source === "pile");
  const piles = h("div.piles",
    stackEl(g.stack_count, {
      label: "Stack",
      onclick: canStack ? () => send(ctx, { type: "draw", source: "stack" }, KEEP_PICKS) : undefined,
      playable: canStack,
      hint: canStack ? "Draw the top card" : null,
    }),
    pileEl(g.pile_top, {
      label: g.dead_card ? "Pile (dead)" : "Pile",
      count: g.pile_size,
      onclick: canPile ? () => send(ctx, { type: "draw", source: "pile" }, KEEP_PICKS) : undefined,
      playable: canPile,
    }),
  );
  const left = rebuildsLeft(g);
  if (!g.over && g.phase !== "cut") {
    piles.append(h("span.chip.rebuilds", {
      dataset: { key: "rebuilds" },
      title: "When the stack runs out, the pile (all but its top card) is shuffled into a new stack; when no rebuild is left, the hand ends with no winner.",
    }, left === null ? "Stack rebuilds: no limit" : `Stack rebuilds left: ${left}`));
  }
  center.append(piles);
  // A question for me (call? allow? cut!) sits right above my hand, where a
  // phone shows it without scrolling; other people's show in the middle.
  let mineAsk = null;
  if (g.phase === "posso_window" || g.phase === "posso_answer") {
    const p = g.posso || {};
    const ask = !ctx.readonly && ((g.phase === "posso_window" && (p.waiting || []).includes(me)) || (g.phase === "posso_answer" && p.next === me));
    // Not asked (my own switches): a note where the question would be.
    if (ask && g.phase === "posso_window" && !askedAboutPosso(g, ctx.you)) {
      mineAsk = notAskedNote(ctx, p.card ? cardEl(p.card, { extra: "sm" }) : null, null);
    } else if (ask) mineAsk = possoPanel(ctx);
    else center.append(possoPanel(ctx));
  }
  // A moot cut (a hit could change nothing, e.g. in hand 1) asks nobody: the
  // server deals at once, so there is neither a prompt nor a result to show.
  const moot = !!g.cut?.moot;
  if (g.phase === "cut" && !moot && g.dealer === me && !ctx.readonly) mineAsk = cutPanel(ctx);
  else if (!moot && (g.phase === "cut" || (g.cut && !g.cut.due && ui.cutShown !== `${g.hand_no}`))) center.append(cutPanel(ctx));
  center.append(meldsArea(ctx, { mine, down, picked }));
  parts.push(center);


  // ---- my area ----
  if (me !== null) {
    const buttons = [];
    let hint = "";
    if (mine && g.phase === "draw") {
      buttons.push(btn("Draw from stack", () => send(ctx, { type: "draw", source: "stack" }, KEEP_PICKS), { primary: true, disabled: !canStack, key: "draw-stack" }));
      buttons.push(btn(g.pile_top ? `Take ${cardsText([g.pile_top])}` : "Take pile", () => send(ctx, { type: "draw", source: "pile" }, KEEP_PICKS), { disabled: !canPile, key: "draw-pile", title: g.dead_card ? "The pile card is dead after a Posso" : null }));
      hint = g.dead_card ? "The pile is dead after that Posso: draw from the stack." : "Start your turn: draw from the stack or take the pile card.";
    } else if (mine && g.phase === "play") {
      if (!down) {
        // Only the melds the engine lists for this hand can be staged.
        for (const kind of meldKinds(g)) {
          const can = stageable(ctx, kind, picked);
          const reason = picked.length ? can.reason : `pick the cards for a ${kind} first`;
          buttons.push(btn(`Make ${kind}`, () => stage(ctx, kind), { disabled: !can.ok, key: `make-${kind}`, ready: can.ok, title: can.ok ? null : reason.charAt(0).toUpperCase() + reason.slice(1) }));
        }
        const ready = ui.staged.length === (g.requirement?.melds?.length || 0);
        buttons.push(btn(g.requirement?.all_cards ? "Go down and out" : "Go down", () => goDown(ctx), { primary: ready, disabled: !ui.staged.length, key: "go-down" }));
        if (has("go_down")) buttons.push(btn("Arrange for me", () => suggest(ctx), { key: "suggest", title: "Lay out one arrangement that meets the requirement" }));
      }
      if (has("discard")) buttons.push(btn("Discard", () => send(ctx, { type: "discard", card: picked[0] }), { disabled: picked.length !== 1, key: "discard", primary: picked.length === 1 && !ui.staged.length }));
      hint = playHint(ctx, { down, picked });
    } else if (g.phase === "cut" && g.dealer === me && !g.cut?.moot) {
      hint = "You are the dealer: cut the deck.";
    }
    const staging = !down && ui.staged.length ? stagingArea(ctx) : null;
    const handCards = keyed(hand).filter((x) => !stagedKeys.has(x.key)).map((x) => x.code);
    const lit = litCards(ctx, { down, picked, mine });
    // Once the game is over there is nothing to decide: the panel keeps only
    // its head, and the hand is shown among "Hands at the end" with the others',
    // which then have the screen (the hand panel covered all but one of them).
    parts.push(myArea(ctx, me, { mine, badge: { extra: seatChips(ctx, me) } },
      g.over ? null : actionBar(ctx, buttons, hint || (mine ? "" : waitingText(ctx))),
      staging,
      // Right above the hand: what changes above it as the others move
      // (the hint, their chips) cannot shift these buttons under a finger.
      mineAsk,
      g.over ? null : handArea(ctx, handCards, {
        game: "posso",
        // Cards may be picked ahead, while the others play: the picks wait
        // for the turn (a discard chosen early, a meld half made).
        selectable: !ctx.readonly && !g.over,
        // Once down, cards go onto melds one at a time: a new pick replaces the old.
        onPick: down ? (key) => { if (ui.selected.includes(key)) ui.selected = [key]; } : undefined,
        playable: lit ? (c) => lit.has(c) : null,
        isWild,
        label: `Your hand, ${hand.length} cards`,
      }),
    ));
  } else {
    parts.push(actionBar(ctx, [], "You are watching."));
  }
  return h("div.tablebox.posso", parts);
}

function detailText(g) {
  const req = g.requirement;
  const bits = [`Hand ${g.hand_no} of 10`];
  if (req) bits.push(`${req.text || requirementText(req.melds)} · ${req.deal} cards`);
  return bits.join(" · ");
}

function promptText(ctx) {
  const g = ctx.game;
  const me = ctx.me;
  if (g.over) return "Game over";
  const name = (s) => ctx.name(s);
  switch (g.phase) {
    case "cut":
      if (g.cut?.moot) return "Dealing";
      return g.dealer === me ? "Your cut" : `${name(g.dealer)} is cutting`;
    case "posso_window":
      return g.posso?.waiting?.includes(me) && askedAboutPosso(g, ctx.you) ? "Posso?" : "Posso window";
    case "posso_answer":
      return g.posso?.next === me ? "Answer the Posso" : `${name(g.posso?.next)} answers`;
    case "draw":
      return g.turn === me ? "Your turn: draw" : `${name(g.turn)} to draw`;
    case "play":
      return g.turn === me ? "Your turn" : `${name(g.turn)} to play`;
    default:
      return "";
  }
}

/** "What can I do now?": the choice in front of the table, mine or whose. */
export function nowText(ctx) {
  const g = ctx.game;
  const me = ctx.me;
  const who = (s) => ctx.seatName(s);
  const p = g.posso || {};
  const card = p.card ? cardsText([p.card]) : "the card";
  if (g.over) return "The game is over: see the places and the score sheet.";
  switch (g.phase) {
    case "cut":
      if (g.cut?.moot) return "Dealing the next hand.";
      return g.dealer === me ? "Your cut: choose a place along the deck's edge, then Cut here." : `Waiting for ${who(g.dealer)} to cut the deck.`;
    case "posso_window": {
      const waiting = (p.waiting || []).filter((s) => s !== me).map(who);
      const others = waiting.length ? `${names(waiting)} to call Posso or pass` : "the window to close";
      if ((p.waiting || []).includes(me)) {
        if (!askedAboutPosso(g, ctx.you)) return `Nothing to do: you are not asked about the ${card}. Waiting for ${others}.`;
        return `Posso? Call it to take the ${card} and a penalty card, or pass.`;
      }
      if (p.next === me) return `Waiting for ${others}; then your turn starts (you may take the ${card}).`;
      return `Waiting for ${others} on the ${card}.`;
    }
    case "posso_answer":
      if (p.next === me) return `${who(p.caller)} calls Posso on the ${card}: allow it, or deny it and take the card as your draw.`;
      return `Waiting for ${who(p.next)} to allow or deny ${p.caller === me ? "your" : `${who(p.caller)}'s`} Posso.`;
    case "draw":
      if (g.turn !== me) return `Waiting for ${who(g.turn)} to draw.`;
      return g.dead_card ? "Your turn: draw from the stack (the pile card is dead after that Posso)." : "Your turn: draw from the stack or take the pile.";
    case "play": {
      if (g.turn !== me) return `Waiting for ${who(g.turn)} to play and discard.`;
      const req = g.requirement || {};
      if (req.all_cards && !g.down?.[me]) return "Your turn: go down and out with three runs using every card, or discard.";
      if (!g.down?.[me]) return `Your turn: go down with ${req.text || "the hand's melds"} if you can, then discard.`;
      return "Your turn: play cards onto any meld or swap a wild, then discard.";
    }
    default:
      return "";
  }
}

/** The first game's hint for the phase in front of me (one per phase). */
function guideFor(ctx) {
  const g = ctx.game;
  const me = ctx.me;
  if (g.over || me === null) return null;
  const p = g.posso || {};
  if (g.phase === "cut" && g.dealer === me && !g.cut?.moot) {
    return { key: "cut", text: "The dealer cuts blind: lift exactly the cards the deal needs and your score drops to the leader's. Aim along the edge; a little luck decides." };
  }
  if (g.phase === "posso_window" && (p.waiting || []).includes(me) && askedAboutPosso(g, ctx.you)) {
    return { key: "posso", text: "Posso lets you beg the discard out of turn: you get the card plus a blind penalty card, if the next player allows it. Too many questions? Use the switches under the buttons." };
  }
  if (g.phase === "posso_answer" && p.next === me) {
    return { key: "answer", text: "Someone begs the discard. Allow it and they take it plus a penalty card; deny it and you take the card as your own draw." };
  }
  if (g.phase === "draw" && g.turn === me) {
    return { key: "draw", text: "Each turn starts with a card: the stack's top (unseen) or the pile's top (everyone sees what you took)." };
  }
  if (g.phase === "play" && g.turn === me && !g.down?.[me]) {
    return { key: "godown", text: `To go down, lay exactly this hand's melds (${g.requirement?.text || ""}): pick cards, press Make set or Make run, then Go down. Twos and jokers are wild. Then discard one card.` };
  }
  if (g.phase === "play" && g.turn === me) {
    return { key: "playon", text: "You are down: get rid of your cards by playing them onto any meld (pick a card, then a lit end), and discard. An empty hand goes out." };
  }
  return null;
}

function waitingText(ctx) {
  const g = ctx.game;
  if (g.phase === "posso_window" && g.posso?.next === ctx.me) return "You are next: waiting to see if anyone calls Posso.";
  return "Wait for your turn.";
}

/** Ring positions from my left, clockwise (phantoms are positions with no seat). */
function ringOrder(ctx) {
  const ring = ctx.game.ring && ctx.game.ring.length ? ctx.game.ring : [...Array(ctx.game.seats).keys()];
  const n = ring.length;
  const mine = ctx.me === null ? -1 : ring.indexOf(ctx.me);
  const out = [];
  for (let i = 1; i <= n; i++) {
    const pos = (mine + i + n) % n;
    if (ring[pos] !== ctx.me || ctx.me === null) out.push({ pos, seat: ring[pos] });
  }
  if (ctx.me === null) return out.slice(0, n);
  return out.filter((x) => x.seat !== ctx.me);
}

function seatOrPhantom(ctx, { pos, seat }) {
  if (seat === null || seat === undefined) {
    return h("div.seat.phantom", { role: "group", "aria-label": "Phantom player", dataset: { pos } },
      h("div.seat-head", h("span.seat-name", "Phantom")),
      h("div.seat-body", cardEl(null, { extra: "xs" }), h("span.muted-l.phantom-note", "turns the stack top")));
  }
  return seatBadge(ctx, seat, { extra: seatChips(ctx, seat) });
}

function seatChips(ctx, s) {
  const g = ctx.game;
  const p = g.posso;
  return h("span.tags",
    g.down?.[s] ? h("span.chip.down", { title: "Has gone down" }, "down") : null,
    p && p.callers?.includes(s) ? h("span.chip.called", "Posso!") : null,
    p && p.passed?.includes(s) ? h("span.chip.passed", "pass") : null,
    p && p.waiting?.includes(s) ? h("span.chip.passed", "…") : null,
    h("span.chip.score", { title: "Score so far" }, `${g.totals?.[s] ?? 0} pts`),
  );
}

// ---- the score sheet tab ----

export function sheet(ctx) {
  const g = ctx.game;
  const names = [...Array(g.seats).keys()].map((s) => ctx.seatName(s));
  const data = normalizeSheet(g.sheet || [], names);
  // a player's row opens that hand's replay in another tab (the table stays)
  const id = ctx.room.game_id;
  const handHref = id && ctx.me !== null && !ctx.readonly ? (n) => `/#game/${id}/hand/${n}` : null;
  return h("div.livesheet", sheetEl(data, { current: g.over ? null : g.hand_no, hands: 10, first: g.options?.start_hand || 1, handHref, newTab: true }));
}

export const scoreText = (n) => `${n} points`;

// ---- the log ----

export function describe(e, ctx) {
  const who = ctx.name(e.seat);
  switch (e.type) {
    case "cut_due":
      if (e.moot) return null; // the cut event that follows says it
      return { text: `Hand ${e.hand}: ${e.dealer === ctx.me ? "you cut" : `${ctx.name(e.dealer)} cuts`} (the deal needs ${e.target} or ${e.target + 1} cards).`, cls: "sys" };
    case "cut":
      if (e.moot) return { text: `Hand ${e.hand}: no cut, as a hit could not change ${e.seat === ctx.me ? "your" : `${ctx.seatName(e.seat)}'s`} score.`, cls: "sys" };
      return { text: e.count === null ? `${who} missed the cut (time ran out).` : `${who} cut ${e.count} (needed ${e.target} or ${e.target + 1}): ${e.hit ? "a hit!" : "a miss."}${e.effect ? ` Score ${e.effect.before} → ${e.effect.after}.` : ""}`, cls: e.hit ? "big" : "" };
    case "dealt":
      return { text: `Hand ${e.hand}: you were dealt ${e.cards.length} cards.`, cls: "sys" };
    case "drew":
      if (e.source === "pile") return `${who} took ${cardsText([e.card])} from the pile.`;
      return e.seat === ctx.me ? null : `${who} drew from the stack.`;
    case "drew_card":
      return { text: `You drew ${cardsText([e.card])}.`, cls: "me" };
    case "went_down":
      return { text: `${who} went down: ${e.melds.map((m) => cardsText(m.cards)).join(" | ")}.`, cls: "big" };
    case "played_on":
      return `${who} played ${cardsText(e.cards)} on ${e.meld.owner === e.seat ? (e.seat === ctx.me ? "your own" : "their own") : e.meld.owner === ctx.me ? "your" : `${ctx.seatName(e.meld.owner)}'s`} ${e.meld.kind === "run" ? "run" : "set"}.`;
    case "swapped_wild":
      return `${who} swapped ${cardsText([e.card])} for the ${cardsText([e.wild])}, which moved to the ${e.end} end.`;
    case "discarded":
      ctx.ui.cutShown = `${ctx.game?.hand_no}`; // the cut's news is old once play is on
      return `${who} discarded ${cardsText([e.card])}.`;
    case "posso_opened":
      return null;
    case "posso_called":
      return { text: `${who} called Posso!`, cls: "big" };
    case "posso_passed":
      return null;
    case "posso_answered":
      if (e.timed_out && e.seat === ctx.me) {
        const text = `Time ran out before you answered, so ${ctx.seatName(e.caller)}'s Posso was allowed.`;
        if (!ctx.readonly) toast(text);
        return { text, cls: "big" };
      }
      return `${who} ${e.allow ? "allowed" : "denied"} ${e.caller === ctx.me ? "your" : `${ctx.seatName(e.caller)}'s`} Posso${e.timed_out ? " (no answer in time, so it was allowed)" : ""}.`;
    case "possoed":
      return `${who} took ${cardsText([e.card])}${e.penalty ? " and a penalty card" : ""}.`;
    case "posso_penalty_card":
      return { text: `Your penalty card: ${cardsText([e.card])}.`, cls: "me" };
    case "phantom_turned":
      return `The phantom turned up ${cardsText([e.card])}.`;
    case "reshuffled":
      return { text: "The pile was shuffled into a new stack.", cls: "sys" };
    case "timed_out":
      return null;
    case "went_out":
      return { text: `${who} went out!`, cls: "big" };
    case "hand_ended":
      return { text: `Hand ${e.hand} is over: ${e.row.points.map((p, s) => `${ctx.seatName(s)} +${p}`).join(", ")}.`, cls: "big" };
    case "game_over":
      return { text: "Game over.", cls: "big" };
    default:
      return null;
  }
}
