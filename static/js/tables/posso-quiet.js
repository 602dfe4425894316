// Quieter Posso: a person's own switches, "don't ask me about Possos this
// hand" and "only ask when the card could help me" (docs/games/posso.md,
// "Quieter Posso"). The server holds them (the view's you.quiet, told to
// nobody else) and passes for you at once; this browser remembers "only when
// it helps" for each room (another room asks again until it is set there) and
// says it again whenever the room has forgotten it (a restart).
import { h } from "../dom.js";
import { pref, setPref } from "../api.js";

/** Am I asked about the card in this Posso window? */
export function askedAboutPosso(game, you) {
  const q = you?.quiet;
  const p = game?.posso;
  if (!q || !p) return true;
  if (q.hand !== null && q.hand !== undefined && q.hand === game.hand_no) return false;
  return !(q.helpful && p.helps === false);
}

/** Tell the room this browser's "only when it helps" when it says otherwise. */
export function syncQuiet(ctx) {
  const q = ctx.you?.quiet;
  const ui = ctx.ui;
  if (!q || ctx.readonly || ctx.me === null || ui.quietPending || ui.quietFailed) return;
  const want = pref(helpfulKey(ctx), false) === true;
  if (q.helpful === want) return;
  ui.quietPending = true;
  ctx.cmd({ type: "posso_quiet", helpful: want }).then(
    () => { ui.quietPending = false; },
    () => { ui.quietPending = false; ui.quietFailed = true; },
  );
}

/** "Only when it helps" is kept per room. */
const helpfulKey = (ctx) => `possoHelpful:${ctx.room?.code || ""}`;

function setHelpful(ctx, on) {
  setPref(helpfulKey(ctx), on);
  ctx.ui.quietFailed = false;
  ctx.cmd({ type: "posso_quiet", helpful: on }).catch(() => {});
}

/** The two switches, under the Posso question (or the note that replaces it). */
export function quietControls(ctx) {
  const g = ctx.game;
  const q = ctx.you?.quiet || {};
  const skipping = q.hand === g.hand_no;
  return h("div.quiet", { role: "group", "aria-label": "How often to ask you about Possos" },
    h("button.small", {
      type: "button",
      dataset: { key: "quiet-hand" },
      "aria-pressed": String(skipping),
      onclick: () => ctx.cmd({ type: "posso_quiet", hand: !skipping }).catch(() => {}),
      title: skipping ? "Ask me about Possos again this hand" : "Don't ask me about Possos for the rest of this hand",
    }, skipping ? "Ask me again" : "Don't ask this hand"),
    h("label.quiet-helpful", { dataset: { key: "quiet-helpful" } },
      h("input", {
        type: "checkbox",
        checked: !!q.helpful,
        onchange: (e) => setHelpful(ctx, e.currentTarget.checked),
      }),
      "Ask only if it helps me"),
  );
}

/** In a window that does not ask me: what happens instead. */
export function notAskedNote(ctx, card, timer) {
  const q = ctx.you?.quiet || {};
  const why = q.hand === ctx.game.hand_no ? "you asked not to be asked this hand" : "this card cannot help your hand";
  return h("div.callbar.quietnote", { role: "region", "aria-label": "Posso window" },
    h("div.callq", card, h("span", `Not asking you about this card (${why}): you pass.`), timer),
    quietControls(ctx));
}

/** How many more times this hand's stack may be rebuilt from the pile. */
export function rebuildsLeft(g) {
  const cap = g.options?.reshuffles;
  if (cap === null || cap === undefined) return null;
  return Math.max(0, cap - (g.reshuffled || 0));
}
