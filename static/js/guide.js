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

/** A guided hint for `key` (a phase) of `game`, unless put away. */
export function guideHint(ctx, game, key, text) {
  if (!text || !key || ctx.readonly || ctx.me === null || ctx.me === undefined) return null;
  if (!hintsOn() || seen(game).has(key)) return null;
  const close = (all) => {
    if (all) setPref("guide", "off");
    else setPref(`guide:${game}`, [...seen(game), key]);
    ctx.rerender();
  };
  // Short, and one row with its "Got it": the table stays in view.
  return h("div.guide", { role: "note", dataset: { key: "guide", phase: key }, "aria-label": "Hint" },
    h("span.guide-text", text, " ",
      h("button.link", { type: "button", dataset: { key: "guide-off" }, onclick: () => close(true) }, "No more hints")),
    h("button.small", { type: "button", dataset: { key: "guide-ok" }, onclick: () => close(false) }, "Got it"));
}

/** Names joined for a sentence: "Ann", "Ann and Bob", "Ann, Bob and Cy". */
export function names(list) {
  if (list.length <= 1) return list.join("");
  return `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
}
