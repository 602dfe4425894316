// Posso melds: the melds on the table (play on at either end of a run, swap
// a wild out of a run) and going down by arranging one's own melds.
import { moving } from "../motion.js";
import { h } from "../dom.js";
import { cardEl, cardsText, cardText, cardName } from "../cards.js";
import { requirementText } from "../sheet.js";
import { send, keyed, clearSelection, containsAll } from "./common.js";
import { isWild, arrangeRun } from "./posso-runs.js";

// ---- melds on the table ----

export function meldsArea(ctx, { mine, down, picked }) {
  const g = ctx.game;
  const melds = g.melds || [];
  if (!melds.length) {
    return h("div.zone", h("div.zone-title", "Melds"), h("span.muted-l", `Nobody has gone down. Needed: ${g.requirement?.text || requirementText(g.requirement?.melds)}.`));
  }
  const canPlayOn = mine && g.phase === "play" && down;
  const owners = [...new Set(melds.map((m) => m.owner))];
  return h("div.zone.meldzone",
    h("div.zone-title", "Melds on the table"),
    h("div.meldrow", owners.map((o) =>
      h("div.owner-melds", h("div.meld-owner", ctx.seatName(o)),
        h("div.meldrow", melds.filter((m) => m.owner === o).map((m) => meldEl(ctx, m, { canPlayOn, picked })))))),
  );
}

/** The moves the engine lists for one picked card on one meld: the table
 * offers exactly these (play-ons go one card at a time), never its own guess. */
export function meldMoves(ctx, meldId, card) {
  return (ctx.legal || []).filter((a) => a.meld === meldId
    && ((a.type === "play_on" && a.cards.length === 1 && a.cards[0] === card) || (a.type === "swap_wild" && a.card === card)));
}

function moveButton(ctx, a, isRun) {
  const c = a.type === "swap_wild" ? a.card : a.cards[0];
  const t = cardText(c);
  if (a.type === "swap_wild") {
    return h("button.small", { dataset: { key: `swap:${a.meld}:${a.to}` }, onclick: () => send(ctx, a) },
      `Swap ${t} for the wild (wild moves to the ${a.to} end)`);
  }
  if (!isRun) return h("button.small", { dataset: { key: `on:${a.meld}` }, onclick: () => send(ctx, a) }, `Add ${t} here`);
  const low = a.end === "low";
  return h("button.small", { dataset: { key: `${a.end}:${a.meld}` }, onclick: () => send(ctx, a) },
    low ? `◀ ${t} at the low end` : `${t} at the high end ▶`);
}

function meldEl(ctx, m, { canPlayOn, picked }) {
  const isRun = m.kind === "run";
  const controls = canPlayOn && picked.length === 1 ? meldMoves(ctx, m.id, picked[0]).map((a) => moveButton(ctx, a, isRun)) : [];
  const label = isRun
    ? `Run ${m.low}–${m.high}${m.suit ? ` ${{ C: "♣", D: "♦", H: "♥", S: "♠" }[m.suit]}` : ""}${m.full ? " (full)" : ""}`
    : `Set of ${{ A: "aces", J: "jacks", Q: "queens", K: "kings" }[m.rank] || `${m.rank}s`}`;
  const cards = h("div.cards", m.cards.map((c) => cardEl(c, { wild: isWild(c), label: isRun && isWild(c) ? `${cardName(c)} (wild)` : cardName(c) })));
  // a meld going down moves into place once (keyed by its id)
  return moving(h(`div.meld${controls.length ? ".target" : ""}`, {
    role: "group", "aria-label": `${ctx.seatName(m.owner)}'s ${label}: ${cardsText(m.cards)}`, dataset: { meld: m.id, key: `meld:${m.id}` },
  }, h("div.meld-head", h("span", label)), cards, controls.length ? h("div.ends", controls) : null), m.id, "laid");
}

// ---- going down: arranging melds ----

/** The kinds of meld this hand lays ("set", "run"), from its requirement. */
export function meldKinds(g) {
  return ["set", "run"].filter((kind) => (g.requirement?.melds || []).some((m) => m.kind === kind));
}

/**
 * Do the picked cards make a meld of `kind` the engine would lay this hand?
 * The engine says, in the view's meld_options: groups of naturals from the
 * hand, each with the (naturals, wilds) counts a meld may take from it. The
 * picks make one when a group holds all their naturals and their counts are
 * listed; the table adds no rule of its own. `reason` says, in words, why not.
 */
export function stageable(ctx, kind, codes) {
  const g = ctx.game;
  const opts = g.meld_options;
  if (!opts) return { ok: false, reason: "" };
  const sizes = (g.requirement?.melds || []).filter((m) => m.kind === kind).map((m) => m.size);
  if (!sizes.length) return { ok: false, reason: `hand ${g.hand_no} lays no ${kind}s` };
  const wild = codes.filter((c) => opts.wilds.includes(c));
  const nat = codes.filter((c) => !opts.wilds.includes(c));
  const groups = opts.melds.filter((m) => m.kind === kind && containsAll(m.cards, nat));
  if (groups.some((m) => m.counts.some(([n, w]) => n === nat.length && w === wild.length))) return { ok: true, reason: "" };
  if (!nat.length) return { ok: false, reason: `a ${kind} needs at least one card that is not wild` };
  if (!groups.length) {
    return { ok: false, reason: kind === "set" ? "a set needs cards of one rank, and these ranks differ" : "a run needs cards of one suit in a row (wilds may fill its gaps)" };
  }
  const least = Math.min(...sizes);
  const need = g.requirement?.all_cards ? `${least} or more cards` : `${[...new Set(sizes)].join(" or ")} cards`;
  if (codes.length < least) return { ok: false, reason: `too few cards: this hand's ${kind}s have ${need}` };
  if (!g.requirement?.all_cards && codes.length > Math.max(...sizes)) return { ok: false, reason: `too many cards: this hand's ${kind}s have ${need}` };
  return { ok: false, reason: kind === "set" ? "too many wilds: at most half of a set may be wild" : "these cards cannot stand in a row as one run, at most half of it wild" };
}

export function stage(ctx, kind) {
  const ui = ctx.ui;
  const keys = [...ui.selected];
  if (!stageable(ctx, kind, keys.map((k) => k.split("#")[0])).ok) return;
  ui.staged.push({ kind, keys, spare: "high" });
  ui.selected = [];
  ui.error = null;
  ctx.rerender();
}

function stagedCards(m) {
  if (m.fixed) return m.fixed;
  const codes = m.keys.map((k) => k.split("#")[0]);
  return m.kind === "run" ? arrangeRun(codes, m.spare) : codes;
}

export function goDown(ctx) {
  const melds = ctx.ui.staged.map((m) => ({ kind: m.kind, cards: stagedCards(m) }));
  return ctx.act({ type: "go_down", melds }).then(
    () => {
      ctx.ui.staged = [];
      clearSelection(ctx);
      ctx.rerender();
    },
    () => ctx.rerender(),
  );
}

/** Fill the staging area from the server's representative arrangement. */
export function suggest(ctx) {
  const a = (ctx.legal || []).find((x) => x.type === "go_down");
  if (!a) return;
  const pool = keyed(ctx.game.hand || []);
  const taken = new Set();
  ctx.ui.staged = a.melds.map((m) => ({
    kind: m.kind,
    spare: "high",
    keys: m.cards.map((code) => {
      const k = pool.find((x) => x.code === code && !taken.has(x.key));
      taken.add(k.key);
      return k.key;
    }),
    fixed: m.cards, // keep the server's order for runs
  }));
  ctx.ui.selected = [];
  ctx.ui.error = null;
  ctx.rerender();
}

export function stagingArea(ctx) {
  const ui = ctx.ui;
  const need = ctx.game.requirement;
  return h("div.staging", { role: "group", "aria-label": "Melds you are arranging" },
    h("div.zone-title", `Going down: ${ui.staged.length} of ${need?.melds?.length ?? "?"} melds (${need?.text || requirementText(need?.melds)})`),
    h("div.meldrow", ui.staged.map((m, i) => {
      const cards = stagedCards(m);
      const hasSpare = m.kind === "run" && !m.fixed && cards.some(isWild);
      return h("div.meld.staged",
        h("div.meld-head", h("span", `${m.kind === "run" ? "Run" : "Set"} of ${cards.length}`),
          hasSpare ? h("button.small", {
            dataset: { key: `spare:${i}` },
            title: "Move spare wilds to the other end",
            onclick: () => { m.spare = m.spare === "high" ? "low" : "high"; ctx.rerender(); },
          }, "⇄ wilds") : null,
          h("button.small", { dataset: { key: `unstage:${i}` }, "aria-label": "Take these cards back", onclick: () => { ui.staged.splice(i, 1); ctx.rerender(); } }, "✕")),
        h("div.cards", cards.map((c) => cardEl(c, { wild: isWild(c) }))));
    })));
}

export function playHint(ctx, { down, picked }) {
  const g = ctx.game;
  if (!down) {
    const need = g.requirement?.text || requirementText(g.requirement?.melds);
    if (g.requirement?.all_cards) return `Hand ten: go down and out in one with every card (${need}), or discard.`;
    if (ctx.ui.staged.length) return `Arrange ${need}, then Go down — or discard one card to end your turn.`;
    if (picked.length === 1) return "Discard it, or pick more cards to make a meld.";
    if (picked.length > 1) {
      const kinds = meldKinds(g);
      const can = kinds.filter((kind) => stageable(ctx, kind, picked).ok);
      if (can.length) return `${cardsText(picked)}: make ${can.map((k) => `a ${k}`).join(" or ")}.`;
      const why = kinds.map((kind) => `Not a ${kind}: ${stageable(ctx, kind, picked).reason}.`);
      return `${cardsText(picked)} make no meld. ${why.join(" ")}`;
    }
    return `To go down you need ${need}. Pick cards and make melds, or pick one card to discard.`;
  }
  if (picked.length === 1) {
    const fits = (ctx.legal || []).some((a) => (a.type === "play_on" && a.cards[0] === picked[0]) || (a.type === "swap_wild" && a.card === picked[0]));
    return fits ? `Discard ${cardText(picked[0])}, or play it with a button on a meld.` : `${cardText(picked[0])} fits no meld now: discard it, or pick a lit card.`;
  }
  if (picked.length) return "Cards go onto melds one at a time: pick a single lit card.";
  return "Lit cards fit a meld: pick one to play it on, then discard one card.";
}

/** Cards that are useful now (from the server's representative legal list). */
export function litCards(ctx, { down, mine }) {
  if (!mine || ctx.game.phase !== "play") return null;
  const out = new Set();
  for (const a of ctx.legal || []) {
    if (a.type === "play_on" || a.type === "swap_wild") for (const c of a.cards || [a.card]) out.add(c);
    if (a.type === "go_down" && !down) for (const m of a.melds) for (const c of m.cards) out.add(c);
  }
  return out;
}
