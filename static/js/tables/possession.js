// Possession table: stock and the ajar pile in the middle, every player's
// estate of properties (secured ones marked), and one put-down per turn:
// discard, a new property (optionally with the top pile cards), an addition
// to your own property or a steal of someone else's. The server lists every
// legal meld and extension, so properties that can take the picked cards
// light up as targets.
import { moving } from "../motion.js";
import { h } from "../dom.js";
import { cardEl, cardsText, cardName, parse, suitChar, isRed } from "../cards.js";
import {
  statusBar, opponentsRow, handArea, actionBar, btn, send, isMyTurn, pruneSelection,
  selectedCodes, turnPrompt, stackEl, shownHands, sameCards, completing,
  clearSelection,
  myArea,
} from "./common.js";

const KIND = { set: "set", run: "sequence" };

export function render(ctx) {
  const g = ctx.game;
  const hand = g.hand || [];
  pruneSelection(ctx, hand);
  const picked = selectedCodes(ctx);
  const mine = isMyTurn(ctx);
  const legal = mine ? ctx.legal : [];
  const drawPhase = mine && legal.some((a) => a.type === "draw");
  const pile = g.pile || [];
  const maxK = pile.length;
  if (!mine || !drawPhase) ctx.ui.pileK = Math.min(ctx.ui.pileK || 0, maxK);
  const k = ctx.ui.pileK || 0;

  const melds = legal.filter((a) => a.type === "meld");
  const extends_ = legal.filter((a) => a.type === "extend");
  const meldMatches = melds.filter((a) => sameCards(a.cards, picked));
  const meldNow = meldMatches.find((a) => a.from_pile === k) || (meldMatches.length === 1 ? meldMatches[0] : null);
  const targets = new Set(extends_.filter((a) => sameCards(a.cards, picked)).map((a) => a.property));
  const lit = picked.length || k
    ? completing([...melds.filter((a) => a.from_pile === k).map((a) => a.cards), ...extends_.map((a) => a.cards)], picked)
    : completing([...melds.map((a) => a.cards), ...extends_.map((a) => a.cards)], []);
  const canDiscard = picked.length === 1 && legal.some((a) => a.type === "discard");

  // ---- centre: stock and the ajar pile ----
  const takePile = mine && legal.some((a) => a.type === "draw" && a.source === "pile");
  const takeStock = mine && legal.some((a) => a.type === "draw" && a.source === "stock");
  const stock = stackEl(g.stock, {
    label: "Stock",
    onclick: takeStock ? () => send(ctx, { type: "draw", source: "stock" }) : undefined,
    playable: takeStock,
    hint: takeStock ? "Pick up the top card" : null,
  });
  const pileBox = h("div.pile.discard.ajar", { role: "group", "aria-label": `Pile, ${g.pile_size} cards` });
  const fan = h("div.ajarcards");
  pile.forEach((code, i) => {
    const depth = pile.length - 1 - i; // 0 = top
    const inUse = depth < k;
    const usable = mine && !drawPhase && melds.some((a) => a.from_pile >= depth + 1);
    const el = cardEl(code, {
      onclick: usable
        ? () => {
            ctx.ui.pileK = k === depth + 1 ? depth : depth + 1;
            ctx.ui.error = null;
            ctx.rerender();
          }
        : takePile && depth === 0
          ? () => send(ctx, { type: "draw", source: "pile" })
          : undefined,
      selected: inUse,
      playable: (takePile && depth === 0) || (usable && !inUse),
      label: `${cardName(code)}${depth === 0 ? ", top of the pile" : `, ${depth} under the top`}${inUse ? ", used in your new property" : ""}`,
    });
    el.dataset.key = `pile:${depth}`;
    if (depth === 0) moving(el, `${g.pile_size}:${code}`); // a discard lands
    fan.append(el);
  });
  if (!pile.length) fan.append(h("div.slot", "empty"));
  pileBox.append(fan, h("span.pile-label", `Pile · ${g.pile_size}${g.options?.open_pile ? " (open)" : pile.length > 1 ? " (ajar)" : ""}`));

  // ---- estates ----
  const estates = h("div.estates");
  // A set's suits decide what can join it with one deck or distinct-suit sets;
  // with two decks and identical cards allowed any card of the rank joins.
  const suitsCount = g.decks !== 2 || !!g.options?.distinct_suit_sets;
  // My own estate first: on a phone the others' follow, and mine is never the
  // one left behind the pinned hand panel.
  const order = [...Array(g.seats).keys()].sort((a, b) => (b === ctx.me) - (a === ctx.me));
  for (const s of order) {
    const props = (g.properties || []).filter((p) => p.owner === s);
    const box = h(`div.estate${s === ctx.me ? ".mine" : ""}`,
      h("div.zone-title", `${ctx.seatName(s)}'s`, h("span.est-word", " estate"), ` · ${g.scores?.[s] ?? 0} card${(g.scores?.[s] ?? 0) === 1 ? "" : "s"}`,
        (g.folded || []).includes(s) ? " · folded" : ""),
    );
    const row = h("div.meldrow");
    for (const p of props) row.append(propertyEl(ctx, p, targets.has(p.id), picked, suitsCount));
    if (!props.length) row.append(h("span.muted-l", "no properties yet"));
    box.append(row);
    estates.append(box);
  }

  // ---- prompt and buttons ----
  let prompt;
  if (g.over) prompt = "Game over";
  else if (g.phase === "showdown") prompt = turnPrompt(ctx, g.open_season ? "Open season: your move" : "Showdown: make a property move or fold", `Showdown: ${ctx.name(g.turn)} to move`);
  else prompt = turnPrompt(ctx, drawPhase ? "Pick up a card" : "Put down: discard, meld, add or steal", null);

  let hint = "";
  if (mine) {
    if (drawPhase) hint = "Take the top of the pile or the stock.";
    else if (!picked.length && !k) hint = g.phase === "showdown" ? "Pick cards for a property, or fold." : "Pick a card to discard, or cards for a property.";
    else if (meldNow) hint = `New ${KIND[kindOf(meldNow, pile)] || "property"}: ${cardsText(picked)}${meldNow.from_pile ? ` with ${meldNow.from_pile} from the pile` : ""}.`;
    else if (targets.size) hint = "Click a lit property to add to it (yours) or steal it (theirs).";
    else if (picked.length > 1 || k) hint = lit.size ? "Keep picking: lit cards can complete a property." : "These cards make no property here.";
    if (g.last_card) hint = `${hint} You drew the last stock card: you may keep everything.`;
  }
  const buttons = [];
  if (mine && drawPhase) {
    buttons.push(btn("Pick up from stock", () => send(ctx, { type: "draw", source: "stock" }), { primary: true, disabled: !takeStock, key: "draw-stock" }));
    buttons.push(btn("Take the pile top", () => send(ctx, { type: "draw", source: "pile" }), { disabled: !takePile, key: "draw-pile" }));
  } else if (mine) {
    if (g.phase !== "showdown") buttons.push(btn("Discard", () => send(ctx, { type: "discard", card: picked[0] }), { disabled: !canDiscard, key: "discard", title: "Discard the one picked card" }));
    buttons.push(btn(k ? `New property (+${k} from pile)` : "New property", () => {
      const a = meldNow || { type: "meld", cards: picked, from_pile: k };
      ctx.ui.pileK = 0;
      send(ctx, { type: "meld", cards: picked, from_pile: a.from_pile });
    }, { primary: !!meldNow, disabled: !picked.length, key: "meld", ready: !!meldNow }));
    if (targets.size === 1) {
      const id = [...targets][0];
      const p = g.properties.find((x) => x.id === id);
      buttons.push(btn(p.owner === ctx.me ? "Add to property" : `Steal from ${ctx.seatName(p.owner)}`, () => send(ctx, { type: "extend", property: id, cards: picked }), { primary: true, key: "extend" }));
    }
    if (legal.some((a) => a.type === "keep")) buttons.push(btn("Keep everything", () => send(ctx, { type: "keep" }), { key: "keep" }));
    if (legal.some((a) => a.type === "fold")) buttons.push(btn("Fold", () => { if (confirm("Fold? You make no more moves this game.")) send(ctx, { type: "fold" }); }, { key: "fold", cls: "danger" }));
    if (k) buttons.push(btn("Don't use pile cards", () => { ctx.ui.pileK = 0; ctx.rerender(); }, { key: "nopile" }));
  }
  const me = ctx.me;
  const extraFor = (s) => ({
    extra: h("span.tags",
      g.starter === s ? h("span.chip", { title: "Had the nearest cards to the first upturn, so played first" }, "started") : null,
      (g.folded || []).includes(s) ? h("span.chip.passed", "folded") : null,
      h("span.chip.down", { title: "Cards in estate" }, `★ ${g.scores?.[s] ?? 0}`),
    ),
  });
  const phaseText = g.phase === "showdown" ? (g.open_season ? "Showdown · open season" : "Showdown") : g.turned_over ? "Second stock" : "Play";
  return h("div.tablebox.possession",
    statusBar(ctx, { title: "Possession", detail: g.over ? "Game over" : `${phaseText} · stock ${g.stock}`, prompt, now: nowText(ctx, drawPhase), guide: guideFor(ctx, mine, drawPhase) }),
    opponentsRow(ctx, extraFor),
    h("div.center", h("div.piles", stock, pileBox), estates),
    g.over ? shownHands(ctx) : null,
    myArea(ctx, me, { mine, badge: extraFor(me), watching: actionBar(ctx, [], "You are watching.") },
          actionBar(ctx, buttons, mine ? hint : g.over ? "" : "Wait for your turn."),
          handArea(ctx, hand, {
            game: "possession",
            selectable: mine && !drawPhase,
            playable: mine && !drawPhase ? (c) => lit.has(c) : null,
            onPick: () => {},
          })),
  );
}

/** "What can I do now?" at the Possession table. */
export function nowText(ctx, drawPhase) {
  const g = ctx.game;
  const me = ctx.me;
  if (g.over) return "The game is over: see the estates and the places.";
  if (g.turn !== me || me === null) {
    const who = ctx.seatName(g.turn);
    if (g.phase === "showdown") return `Waiting for ${who} to make a property move or fold.`;
    return g.drawn ? `Waiting for ${who} to put down and discard.` : `Waiting for ${who} to pick up a card.`;
  }
  if (drawPhase) return "Your turn: pick up the top card of the stock or of the pile.";
  if (g.phase === "showdown") return g.open_season ? "Open season: make a new property, add to one or steal one, or fold." : "Showdown: make a new property, add to one or steal one, or fold.";
  return `Your turn: make a new property, add to yours or steal one, then discard to end your turn.${g.last_card ? " Or keep everything: you drew the last stock card." : ""}`;
}

function guideFor(ctx, mine, drawPhase) {
  const g = ctx.game;
  if (!mine || g.over) return null;
  if (drawPhase) return { key: "draw", text: "Every turn starts with a pick-up: the stock's top card, or the pile's top card. Later you may use cards lying under the pile's top for a new property." };
  if (g.phase === "showdown") return { key: "showdown", text: "The stock is spent: now every turn is a property move (a new property, an addition or a steal), or you fold and keep what you have." };
  return { key: "put", text: "Properties are sets (one rank) or runs (one suit). Pick cards and press New property, or pick cards and a lit property to add to yours or steal someone else's. Discard one card to end your turn." };
}

function kindOf(meld, pile) {
  const cards = [...meld.cards, ...pile.slice(pile.length - meld.from_pile)];
  const ranks = new Set(cards.map((c) => c.slice(0, -1)));
  return ranks.size === 1 ? "set" : "run";
}

function propertyEl(ctx, p, target, picked, suitsCount) {
  const stealing = p.owner !== ctx.me;
  // A property that changed hands moves into its new estate with a mark of
  // its own (a steal), a new one simply lands (static/js/motion.js).
  const owners = (ctx.ui.propOwners ||= {});
  const stolen = (ctx.ui.stolen ||= {});
  if (owners[p.id] !== undefined && owners[p.id] !== p.owner) stolen[p.id] = p.owner;
  owners[p.id] = p.owner;
  const el = h(`div.meld.prop${target ? ".target" : ""}`, {
    role: "group",
    "aria-label": `${ctx.seatName(p.owner)}'s ${KIND[p.kind] || p.kind}: ${cardsText(p.cards)}${p.secured ? ", secured" : ""}`,
    dataset: { prop: p.id, key: `prop:${p.id}` },
  },
  h("div.meld-head",
    h("span", `${KIND[p.kind] || p.kind} · ${p.cards.length}`),
    p.secured ? h("span.secured", { title: "Secured: no card can ever extend it" }, "★ secured") : null,
    target
      ? h("button.small", {
          dataset: { key: `extend:${p.id}` },
          onclick: () => send(ctx, { type: "extend", property: p.id, cards: picked }),
        }, stealing ? "Steal" : "Add")
      : null,
  ),
  h("div.cards", p.cards.map((c) => cardEl(c))),
  chipEl(p, suitsCount));
  return moving(el, `${p.id}:${p.owner}`, stolen[p.id] === p.owner ? "stolen" : "laid");
}

/** The property in one short line, shown instead of its cards on a narrow
 * screen (the stylesheet picks one): a set as its rank and each card's suit
 * (or its rank and size when suits do not count), a run as its two ends, so
 * what a steal or an addition needs is still named (a set's missing suits, a
 * run's next cards). */
function chipEl(p, suitsCount) {
  const suit = (code) => h(`span.chip-suit${isRed(code) ? ".red" : ""}`, suitChar(parse(code).suit));
  const end = (code) => h("span.chip-end", parse(code).rank, suit(code));
  const body = p.kind === "set"
    ? [h("span.chip-end", parse(p.cards[0]).rank), suitsCount ? p.cards.map(suit) : h("span.chip-n", `×${p.cards.length}`)]
    : [end(p.cards[0]), h("span.chip-to", "–"), end(p.cards[p.cards.length - 1]), h("span.chip-n", `·${p.cards.length}`)];
  return h("span.propchip", { "aria-hidden": "true" }, ...body, p.secured ? h("span.secured", { title: "Secured" }, "★") : null);
}

export function describe(e, ctx) {
  const who = ctx.name(e.seat);
  switch (e.type) {
    case "drew":
      if (e.source === "pile") return `${who} took ${cardsText([e.card])} from the pile.`;
      return e.seat === ctx.me ? null : `${who} picked up from the stock.`; // drew_card tells you which
    case "drew_card":
      return { text: `You drew ${cardsText([e.card])}.`, cls: "me" };
    case "last_card":
      return { text: `${who} drew the last stock card.`, cls: "big" };
    case "discarded":
      return `${who} discarded ${cardsText([e.card])}.`;
    case "melded":
      return `${who} laid a new ${KIND[e.property?.kind] || "property"}: ${cardsText(e.property?.cards)}${e.pile_cards?.length ? ` (${e.pile_cards.length} from the pile)` : ""}.`;
    case "added":
      return `${who} added ${cardsText(e.cards)} to a ${KIND[e.property?.kind] || "property"}.`;
    case "stole":
      return { text: `${who} stole ${ctx.seatName(e.victim)}'s ${KIND[e.property?.kind] || "property"} with ${cardsText(e.cards)}!`, cls: "big" };
    case "kept":
      return `${who} kept everything.`;
    case "folded":
      return `${who} folded.`;
    case "open_season":
      return { text: `Open season: ${who} ${e.seat === ctx.me ? "play" : "plays"} alone.`, cls: "big" };
    case "turned_over":
      return { text: "The pile was turned over into a new stock.", cls: "big" };
    case "showdown":
      return { text: `Showdown! ${who} ${e.seat === ctx.me ? "move" : "moves"} first.`, cls: "big" };
    case "game_over":
      return { text: e.reason === "emptied" ? `${who} emptied their hand. Game over.` : "Game over.", cls: "big" };
    default:
      return null;
  }
}

export const scoreText = (n) => `${n} card${n === 1 ? "" : "s"} in estate`;
export { clearSelection };
