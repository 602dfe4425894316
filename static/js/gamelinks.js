// Where a game leads: each person at it to their own page, and the game to its
// exports.  Both the history (a game's page) and the records (a person's page,
// an evening) show them, so they live below both.
import { h } from "./dom.js";

/** A seat's name, linked to the person's page when the seat is a person's. */
export function personLink(seat) {
  if (!seat.person) return h("span", seat.name);
  return h("a.person", { href: `/#person/${seat.person}` }, seat.name);
}

/** A finished game's exports: the sheet as CSV, printing, the full record. */
export function gameExports(g) {
  const links = [];
  if (g.has_sheet) {
    links.push(h("a", { href: `/api/history/games/${g.id}/sheet.csv`, download: "" }, "Score sheet as CSV"));
    links.push(h("button", { onclick: () => window.print() }, "Print the sheet"));
  }
  if (g.status === "finished" && (g.my_seats?.length || g.public_replays)) {
    links.push(h("a", { href: `/api/history/games/${g.id}/record`, download: "" }, "Full record (JSON)"));
    links.push(h("a", { href: "/#replay" }, "Replay a saved record"));
  }
  links.push(h("a", { href: `/#evening/${encodeURIComponent(g.room)}` }, "The room's evening"));
  return h("p.exports.noprint", links.map((l, i) => [i ? " · " : "", l]));
}
