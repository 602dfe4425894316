// Posso melds: the melds on the table (play on at either end of a run, swap
// a wild out of a run) and going down by arranging one's own melds.
import { h } from "../dom.js";
import { cardEl, cardsText, cardName, parse } from "../cards.js";
import { requirementText } from "../sheet.js";
import { send, keyed, clearSelection } from "./common.js";
import { LOWEST, HIGHEST, isWild, valueOf, arrangeRun, arrangeOnRun } from "./posso-runs.js";

// ---- melds on the table ----

export function meldsArea(ctx, { mine, down, picked }) {
  const g = ctx.game;
  const melds = g.melds || [];
  if (!melds.length) {
    return h("div.zone", h("div.zone-title", "Melds"), h("span.muted-l", `Nobody has gone down. Needed: ${g.requirement?.text || requirementText(g.requirement?.melds)}.`));
  }
  const canPlayOn = mine && g.phase === "play" && down && !g.requirement?.all_cards;
  const owners = [...new Set(melds.map((m) => m.owner))];
  return h("div.zone.meldzone",
    h("div.zone-title", "Melds on the table"),
    h("div.meldrow", owners.map((o) =>
      h("div.owner-melds", h("div.meld-owner", ctx.seatName(o)),
        h("div.meldrow", melds.filter((m) => m.owner === o).map((m) => meldEl(ctx, m, { canPlayOn, picked })))))),
  );
}

function meldEl(ctx, m, { canPlayOn, picked }) {
  const isRun = m.kind === "run";
  const controls = [];
  if (canPlayOn && picked.length) {
    if (!isRun) {
      if (picked.every((c) => isWild(c) || parse(c).rank === m.rank)) {
        controls.push(h("button.small", { dataset: { key: `on:${m.id}` }, onclick: () => send(ctx, { type: "play_on", meld: m.id, cards: picked }) }, "Add here"));
      }
    } else if (!m.full && picked.every((c) => isWild(c) || c.slice(-1) === m.suit)) {
      const low = valueOf(m.low);
      const high = valueOf(m.high);
      if (low > LOWEST) controls.push(h("button.small", { dataset: { key: `low:${m.id}` }, onclick: () => send(ctx, { type: "play_on", meld: m.id, cards: arrangeOnRun(m, picked, "low"), end: "low" }) }, "◀ Low end"));
      if (high < HIGHEST) controls.push(h("button.small", { dataset: { key: `high:${m.id}` }, onclick: () => send(ctx, { type: "play_on", meld: m.id, cards: arrangeOnRun(m, picked, "high"), end: "high" }) }, "High end ▶"));
    }
    // Swapping a wild out of a run for the natural it stands for.
    if (isRun && picked.length === 1) {
      for (const a of (ctx.legal || []).filter((x) => x.type === "swap_wild" && x.meld === m.id && x.card === picked[0])) {
        controls.push(h("button.small", { dataset: { key: `swap:${m.id}:${a.to}` }, onclick: () => send(ctx, a) }, `Swap for the wild, wild to ${a.to} end`));
      }
    }
  }
  const label = isRun
    ? `Run ${m.low}–${m.high}${m.suit ? ` ${{ C: "♣", D: "♦", H: "♥", S: "♠" }[m.suit]}` : ""}${m.full ? " (full)" : ""}`
    : `Set of ${{ A: "aces", J: "jacks", Q: "queens", K: "kings" }[m.rank] || `${m.rank}s`}`;
  const cards = h("div.cards", m.cards.map((c) => cardEl(c, { wild: isWild(c), label: isRun && isWild(c) ? `${cardName(c)} (wild)` : cardName(c) })));
  return h(`div.meld${controls.length ? ".target" : ""}`, {
    role: "group", "aria-label": `${ctx.seatName(m.owner)}'s ${label}: ${cardsText(m.cards)}`, dataset: { meld: m.id },
  }, h("div.meld-head", h("span", label)), cards, controls.length ? h("div.ends", controls) : null);
}

// ---- going down: arranging melds ----

export function stage(ctx, kind) {
  const ui = ctx.ui;
  const keys = [...ui.selected];
  if (keys.length < 2) return;
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
    if (picked.length > 1) return "Make a set (same rank) or a run (same suit, in a row); twos and jokers are wild.";
    return `To go down you need ${need}. Pick cards and make melds, or pick one card to discard.`;
  }
  if (picked.length === 1) return "Discard it, or play it onto a lit meld end.";
  if (picked.length) return "Play the picked cards onto a meld (buttons on the melds), or pick one card to discard.";
  return "Play cards onto any meld, then discard one card.";
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
