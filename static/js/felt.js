// The felt's layout, shared by the room and anything else that draws a table:
// the table above, the player's own area (questions, buttons, hand) below it,
// never over it. The table keeps the height the area leaves and scrolls on
// its own when it must (a big table), so nothing lies behind the hand.
import { h, patch } from "./dom.js";

/** Patch `felt` to show a table module's drawing (plus `extra`, e.g. the result). */
export function drawFelt(felt, content, ...extra) {
  const mine = content?.querySelector?.(":scope > .mearea") || null;
  if (mine) mine.remove();
  // A big hand scrolls within its panel: a question appearing above it must
  // not push the cards down under a finger, so the hand is held where it was.
  const hand = felt.querySelector(":scope > .mearea .hand");
  const y0 = hand ? hand.getBoundingClientRect().top : null;
  patch(felt, h("div.tablearea", content), mine, ...extra);
  const panel = felt.querySelector(":scope > .mearea");
  if (hand && hand.isConnected && panel && panel.scrollHeight > panel.clientHeight) {
    const dy = hand.getBoundingClientRect().top - y0;
    if (dy) panel.scrollTop += dy;
  }
  return felt;
}
