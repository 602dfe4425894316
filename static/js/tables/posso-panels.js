// Posso's questions: the Posso window (call or pass), the answer (allow or
// deny), the blind cut along the deck's edge, and the last hand's results.
import { h, on } from "../dom.js";
import { cardEl, sortCards } from "../cards.js";
import { countdown } from "../timer.js";
import { btn, send } from "./common.js";
import { quietControls } from "./posso-quiet.js";

// ---- Posso window and answer ----

export function possoPanel(ctx) {
  const g = ctx.game;
  const p = g.posso || {};
  const me = ctx.me;
  const t = ctx.timer ? countdown(ctx.timer, "") : null;
  const card = p.card ? cardEl(p.card, { extra: "sm" }) : null;
  if (g.phase === "posso_window") {
    const waiting = !ctx.readonly && (p.waiting || []).includes(me);
    const called = (p.callers || []).includes(me);
    const callers = (p.callers || []).length ? h("span.muted-l", `Called: ${p.callers.map((s) => ctx.name(s)).join(", ")}`) : null;
    if (waiting) {
      // The buttons sit last, on a row of their own: news arriving above them
      // (a call, the timer) never moves them while a finger is on one.
      return h("div.callbar.asking", { role: "region", "aria-label": "Posso window" },
        h("div.callq", h("span.q", "Posso? Take the "), card, h("span.q", " plus a penalty card from the stack."), t, callers),
        h("div.btns",
          btn("Posso!", () => send(ctx, { type: "call_posso" }, { keepSelection: true }), { primary: true, key: "call-posso" }),
          btn("Pass", () => send(ctx, { type: "pass_posso" }, { keepSelection: true }), { key: "pass-posso" }),
          // after the two answers, so they never move: wide screens keep
          // one row, a phone wraps the switches under them
          quietControls(ctx)));
    }
    const body = [card, h("span", called ? "You called Posso: waiting for the others." : p.next === me
      ? "Anyone may call Posso on this card before your turn."
      : (p.eligible || []).includes(me) ? "You answered." : "Posso window open.")];
    return h("div.callbar", { role: "region", "aria-label": "Posso window" }, body, t, callers);
  }
  // Answer phase: the next player allows or denies the winning caller.
  if (p.next === me && !ctx.readonly) {
    return h("div.callbar", { role: "region", "aria-label": "Answer the Posso" },
      h("span.q", `${ctx.name(p.caller)} calls Posso on`), card,
      btn("Allow", () => send(ctx, { type: "answer_posso", allow: true }, { keepSelection: true }), { primary: true, key: "allow" }),
      btn("Deny (I take it)", () => send(ctx, { type: "answer_posso", allow: false }, { keepSelection: true }), { key: "deny" }),
      t, h("strong.autonote", ctx.timer ? `No answer before the timer ends allows it.` : "No answer in time allows it."));
  }
  return h("div.callbar", { role: "region", "aria-label": "Posso call" },
    h("span", `${ctx.name(p.caller)} ${p.caller === me ? "call" : "calls"} Posso on`), card,
    h("span", `— ${ctx.name(p.next)} ${p.next === me ? "answer" : "answers"}.`), t);
}

// ---- the blind cut ----

export function cutPanel(ctx) {
  const g = ctx.game;
  const c = g.cut || {};
  const ui = ctx.ui;
  if (!c.due) {
    const who = ctx.name(c.dealer);
    const text = c.count === null || c.count === undefined
      ? `${who} did not cut in time: a miss.`
      : `${who} cut ${c.count} cards; the deal needed ${c.target} or ${c.target + 1}. ${c.hit ? "A hit!" : `A miss by ${Math.min(Math.abs(c.count - c.target), Math.abs(c.count - c.target - 1))}.`}`;
    const eff = c.effect ? ` Score ${c.effect.before} → ${c.effect.after}.` : "";
    return h("div.hint-box.cutresult", { role: "status" }, text + eff, " ",
      h("button.small", { onclick: () => { ui.cutShown = `${g.hand_no}`; ctx.rerender(); }, dataset: { key: "cut-ok" } }, "OK"));
  }
  if (g.dealer !== ctx.me || ctx.readonly) {
    return h("div.hint-box", `${ctx.name(g.dealer)} is cutting the deck for hand ${g.hand_no} (aiming for ${c.target} or ${c.target + 1} cards). `,
      ctx.timer ? countdown(ctx.timer, "") : null);
  }
  if (typeof ui.cutAt !== "number") ui.cutAt = 0.5;
  const mark = h("div.mark", { style: { left: `${ui.cutAt * 100}%` } });
  const edge = h("div.deckedge", {
    role: "slider",
    tabindex: 0,
    "aria-label": "Where to cut the deck, along its edge",
    "aria-valuemin": 0,
    "aria-valuemax": 100,
    "aria-valuenow": Math.round(ui.cutAt * 100),
    "aria-valuetext": `${Math.round(ui.cutAt * 100)}% of the way along`,
    dataset: { key: "deckedge" },
  }, mark);
  // The handlers act on the live edge (e.currentTarget): a redraw keeps the
  // element on the page and hands it these handlers, not this new tree.
  const set = (live, x) => {
    ui.cutAt = Math.min(1, Math.max(0, x));
    live.querySelector(".mark").style.left = `${ui.cutAt * 100}%`;
    live.setAttribute("aria-valuenow", String(Math.round(ui.cutAt * 100)));
    live.setAttribute("aria-valuetext", `${Math.round(ui.cutAt * 100)}% of the way along`);
  };
  const fromEvent = (e) => {
    const r = e.currentTarget.getBoundingClientRect();
    set(e.currentTarget, (e.clientX - r.left) / r.width);
  };
  on(edge, "pointerdown", (e) => {
    e.currentTarget.setPointerCapture?.(e.pointerId);
    fromEvent(e);
  });
  on(edge, "pointermove", (e) => {
    if (e.buttons) fromEvent(e);
  });
  const doCut = () => send(ctx, { type: "cut", at: Math.round(ui.cutAt * 10000) / 10000 });
  on(edge, "keydown", (e) => {
    const step = e.shiftKey ? 0.05 : 0.01;
    const live = e.currentTarget;
    if (e.key === "ArrowLeft" || e.key === "ArrowDown") set(live, ui.cutAt - step);
    else if (e.key === "ArrowRight" || e.key === "ArrowUp") set(live, ui.cutAt + step);
    else if (e.key === "Home") set(live, 0);
    else if (e.key === "End") set(live, 1);
    else if (e.key === "Enter" || e.key === " ") doCut();
    else return;
    e.preventDefault();
  });
  return h("div.cutter", { role: "region", "aria-label": "Cut the deck" },
    h("div.q", `Cut the deck blind: lift ${c.target} or ${c.target + 1} of its ${c.deck} cards to ${g.options?.cutting === "to_win" ? "wipe your score to 0" : "bring your score down to the leader's"}.`
      + (c.jitter ? ` Even a perfect aim lands up to ${c.jitter} cards either way.` : "")),
    edge,
    h("div.row", btn("Cut here", doCut, { primary: true, key: "cut" }), ctx.timer ? countdown(ctx.timer, "Cut") : null),
  );
}

export function lastHandPanel(ctx) {
  const g = ctx.game;
  const lh = g.last_hand;
  const out = lh.went_out === null || lh.went_out === undefined ? "Nobody went out." : `${ctx.seatName(lh.went_out)} went out.`;
  const row = (g.sheet || []).find((r) => r.hand === lh.hand);
  return h("div.shown.lasthand", { role: "region", "aria-label": `Hand ${lh.hand} results` },
    h("div.row", h("h3", `Hand ${lh.hand} is over. ${out}`),
      h("button.small", { dataset: { key: "lasthand-ok" }, onclick: () => { ctx.ui.lastSeen = lh.hand; ctx.rerender(); } }, "Close")),
    lh.hands.map((cards, s) =>
      h("div.shown-row", h("span.seat-name", ctx.seatName(s)),
        h("span.chip", row ? `+${row.points[s]}` : ""),
        h("div.mini", cards.length ? sortCards(cards, "suit", "posso").map((c) => cardEl(c, { extra: "xs" })) : h("span.muted-l", "out!")))));
}
