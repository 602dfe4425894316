"""Drawing one table module in the real page from a view the real engine
made, without a room: the test builds a position in Python (engine state,
`view`, `legal_actions`) and the page draws it exactly as a room would, in
the real stylesheet, at a laptop's or a phone's size.  Moves the page sends
are recorded in `window.acted`; `window.refuse` makes the next one fail with
a given message, as the server's refusal would."""

from __future__ import annotations

from typing import Any

# Mounts `window.draw(spec)`: spec = {game, view, legal, names, seat, height}.
# Like the room (static/js/room.js), every drawing keeps the keyboard focus on
# the element with the same data-key, so keyboard tests see what a player does.
HARNESS = """async () => {
  const { h, mount, rememberFocus, restoreFocus } = await import("/js/dom.js");
  const { drawFelt } = await import("/js/felt.js");
  window.acted = [];
  window.refuse = null;
  window.draw = async (spec) => {
    const table = await import(`/js/tables/${spec.game}.js`);
    const seats = spec.names.map((n) => ({ name: n, connected: true, bot: false }));
    const room = { code: "TEST", game: spec.game, title: spec.game, seats, status: "playing" };
    const ui = { selected: [], sort: "suit" };
    const felt = h("section.felt", { id: "felt", "aria-label": "Card table", tabindex: -1 });
    const side = h("aside.side", h("div.tabs"), h("div.tabbody"));
    const root = h("div.room", felt, side);
    document.body.dataset.room = "playing";
    const focus = rememberFocus();
    mount(document.getElementById("app"), root);
    const ctx = {
      room, you: { seat: spec.seat, host: false }, me: spec.seat,
      game: spec.view, legal: spec.legal || [], timer: spec.timer || null, ui, events: [],
      name: (s) => (s === null || s === undefined ? "—" : s === spec.seat ? "You" : spec.names[s]),
      seatName: (s) => spec.names[s],
      act: (a) => {
        window.acted.push(a);
        if (window.refuse) {
          const message = window.refuse;
          window.refuse = null;
          ui.error = message;
          return Promise.reject(new Error(message));
        }
        return Promise.resolve({});
      },
      cmd: () => Promise.resolve({}),
      rerender: () => {
        const kept = rememberFocus();
        drawFelt(felt, table.render(ctx));
        restoreFocus(kept, felt);
      },
      setSort: (by) => { ui.sort = by; ctx.rerender(); },
    };
    window.ctx = ctx;
    window.table = table;
    ctx.rerender();
    restoreFocus(focus, felt);
    const { updateMoreCue } = await import("/js/cue.js");
    felt.addEventListener("scroll", () => updateMoreCue(felt), { capture: true });
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    updateMoreCue(felt);
  };
}"""


#: the names the drawn tables give their seats
NAMES = ["Ann", "Bob", "Cleo", "Dmitri"]
#: hand one's hands for three seats, to deal with `tests.games.posso.helpers.game`
#: (seat 0 holds nines, seat 2 no queen)
HANDS_OF_THREE = [
    ["3H", "3C", "5D", "5H", "9S", "9C", "KD"],
    ["4H", "4C", "4D", "4S", "6H", "6C", "6D"],
    ["7S", "7H", "8D", "8C", "JS", "JH", "JD"],
]


def open_table(pages: Any, *, phone: bool = False) -> Any:
    page = pages.open("/", phone=phone)
    page.wait_for_selector("#create-name")
    page.evaluate(HARNESS)
    return page


def draw(
    page: Any,
    game: str,
    view: dict[str, Any],
    legal: list[Any],
    names: list[str],
    seat: int | None,
    **extra: Any,
) -> None:
    page.evaluate(
        "(spec) => window.draw(spec)",
        {"game": game, "view": view, "legal": legal, "names": names, "seat": seat, **extra},
    )
