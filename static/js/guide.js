// "What can I do now?": one line under the status bar that always says the
// choice in front of the table (yours, or whom everyone waits for and on
// what), and, in a person's first game of each kind, a short guided hint per
// phase. A hint closes with "Got it" and stays closed (localStorage, per game
// and phase); "No more hints" closes them all, for every game.
import { h } from "./dom.js";
import { pref, setPref } from "./api.js";

/** The line itself: the table module says what the choice is. */
export function nowLine(text) {
  if (!text) return null;
  return h("p.nowline", { dataset: { key: "now" }, "aria-label": `What can I do now? ${text}` },
    h("span.nowq", "Now: "), text);
}

const seen = (game) => new Set(pref(`guide:${game}`, []));

export const hintsOn = () => pref("guide", "on") !== "off";

/**
 * The now-line and, in a first game, the phase's guided hint, sharing the
 * line's row, so a hint never pushes the table down by a row of its own: the
 * hint's text runs on after the line, on one line (tap it for the rest), and
 * its "Got it" and "No more hints" sit in the status bar's top row
 * (`guideHint(...).controls`, placed by tables/common.js statusBar). On a
 * phone the hint's one line sits under the now-line.
 */
export function nowRow(now, hintText) {
  const line = nowLine(now);
  if (!hintText) return line;
  return h("div.nowrow", line, hintText);
}

/**
 * A guided hint for `key` (a phase) of `game`, unless put away:
 * `{ text, controls }`, or null.
 */
export function guideHint(ctx, game, key, text) {
  if (!text || !key || ctx.readonly || ctx.me === null || ctx.me === undefined) return null;
  if (!hintsOn() || seen(game).has(key)) return null;
  const close = (all) => {
    if (all) setPref("guide", "off");
    else setPref(`guide:${game}`, [...seen(game), key]);
    ctx.rerender();
  };
  const ui = ctx.ui || {};
  const open = ui.guideOpen === key;
  const toggle = () => { ui.guideOpen = open ? null : key; ctx.rerender(); };
  return {
    text: h(`div.guide${open ? ".open" : ""}`, {
      role: "note", dataset: { key: "guide", phase: key }, "aria-label": "Hint",
    },
    h("span.guide-text", {
      role: "button", tabindex: 0, "aria-expanded": String(open),
      "aria-label": `Hint: ${text}`, title: open ? null : text,
      onclick: toggle,
      onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } },
    }, text)),
    controls: h("div.guide-ctl", { role: "group", "aria-label": "Hint" },
      h("button.guide-off", { type: "button", dataset: { key: "guide-off" }, onclick: () => close(true) }, "No more hints"),
      h("button.guide-ok", { type: "button", dataset: { key: "guide-ok" }, onclick: () => close(false) }, "Got it")),
  };
}

/** Names joined for a sentence: "Ann", "Ann and Bob", "Ann, Bob and Cy". */
export function names(list) {
  if (list.length <= 1) return list.join("");
  return `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
}
