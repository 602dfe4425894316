"""Nothing hidden behind your hand: at four seats (Possession at two, three
and four) every piece of the table a decision needs is on screen without
scrolling, and not covered by anything (the hand panel included), at
1280x800 and at 390x844. The pictures go to $SCREENSHOTS_DIR when it is set
(artifacts/screenshots/ otherwise), named fits-<game>-<seats>-<size>. With a
first game's hint up (fits-<game>-<seats>-<size>-hint), the same tables as
dealt, for the player to move first, still show all of it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room

pytestmark = pytest.mark.browser

#: what each table must show: the seats, the piles, the centre, the hand
KEY_PARTS = {
    "posso": [".statusbar", ".opponents .seat", ".piles .pile", ".hand", ".actions, .callbar"],
    "bigtwo": [".statusbar", ".opponents .seat", ".center", ".hand"],
    "possum": [".statusbar", ".opponents .seat", ".piles .pile", ".hand"],
    "possession": [".statusbar", ".opponents .seat", ".piles .pile", ".estate", ".hand"],
}
CASES = [("posso", 4), ("bigtwo", 4), ("possum", 4)] + [("possession", n) for n in (2, 3, 4)]

# For each selector, the parts not fully on screen or covered at their centre.
HIDDEN = """(sels) => {
  const out = [];
  for (const sel of sels) {
    const els = [...document.querySelectorAll(sel)];
    if (!els.length) out.push(`${sel}: missing`);
    for (const el of els) {
      const r = el.getBoundingClientRect();
      const name = `${sel} ${el.getAttribute('aria-label') || el.className}`;
      if (r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5) {
        out.push(`${name}: off screen (${Math.round(r.top)}..${Math.round(r.bottom)})`);
        continue;
      }
      const x = r.left + r.width / 2;
      const probe = document.elementFromPoint(x, r.top + Math.min(r.height / 2, 20));
      if (probe && !el.contains(probe) && !probe.contains(el)) {
        out.push(`${name}: covered by ${probe.className || probe.tagName}`);
      }
    }
  }
  return out;
}"""


@pytest.mark.parametrize("size", ["laptop", "phone"])
@pytest.mark.parametrize(("game", "seats"), CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_the_table_is_all_in_view_and_nothing_lies_behind_the_hand(
    pages: Pages, game: str, seats: int, size: str
) -> None:
    page: Any = pages.open("/", phone=size == "phone")
    # a first game's guided hints put away ("No more hints"), as they are
    # after it: the table as people play it game after game
    page.evaluate("() => localStorage.setItem('cardroom:pref:guide', JSON.stringify('off'))")
    bots = 0 if game == "bigtwo" else seats - 1  # Big Two fills its seats itself
    # bots that wait: the table is checked as dealt, the same every run (a
    # phone's Possession table with many properties may still need to scroll)
    create_room(page, "Ann", game, settings={"bot_delay": "10"}, bots=bots)
    if bots:
        page.wait_for_function(
            f"() => document.querySelectorAll('.seat-row .dot.bot').length === {bots}"
        )
    page.click("#start")
    page.wait_for_selector(f".felt.game-{game} .hand .card")
    page.wait_for_timeout(300)  # the hand lays itself out on the next frame
    shoot(page, f"fits-{game}-{seats}-{size}")
    hidden = page.evaluate(HIDDEN, KEY_PARTS[game])
    assert not hidden, "\n".join(hidden)


def posso_after_hand_one(seats: int = 4) -> Any:
    """A Posso game of `seats` just into hand two: hand one's results show."""
    import random

    from app.games.posso import POSSO
    from tests.games.posso.checks import pick

    rng = random.Random(4)
    state = POSSO.new_game(seats, {"cutting": "off"}, 4)
    while state.hand_no == 1:
        seat = min(POSSO.to_act(state)) if POSSO.to_act(state) else None
        if seat is None:
            state, _ = POSSO.apply(state, None, {"type": "timeout"})
            continue
        state, _ = POSSO.apply(state, seat, pick(rng, POSSO.legal_actions(state, seat)))
    assert state.last_hand is not None
    return state


@pytest.mark.parametrize(("size", "asked"), [("laptop", True), ("laptop", False), ("phone", False)])
def test_possos_end_of_hand_results_are_all_in_view(pages: Pages, size: str, asked: bool) -> None:
    """Hand one's results, as hand two starts: in view for the player not
    asked anything yet (the next player; everyone while the dealer cuts), at
    both sizes, and beside the Posso question too on a laptop.  (On a phone
    the question and the hand leave no room: the results wait, above them,
    until the question is answered.)"""
    from app.games.posso import POSSO
    from tests.browser.tables import draw, open_table

    state = posso_after_hand_one()
    assert state.phase == "posso_window"
    seat = min(state.eligible) if asked else state.ring[state.turn]
    page = open_table(pages, phone=size == "phone")
    names = ["Ann", "Bob", "Cleo", "Dmitri"]
    draw(page, "posso", POSSO.view(state, seat), POSSO.legal_actions(state, seat), names, seat)
    page.wait_for_timeout(300)
    shoot(page, f"fits-posso-hand-results-{size}{'-asked' if asked else ''}")
    panel = page.locator(".lasthand")
    assert "Hand 1 is over" in panel.inner_text()
    assert page.locator("[data-key=call-posso]").count() == int(asked)
    # every row whole, to its last card, and none of it behind the hand panel
    rows = [".lasthand", ".lasthand .shown-row", ".lasthand .mini > .card:last-child", ".hand"]
    hidden = page.evaluate(HIDDEN, rows)
    panel = page.locator(".mearea").bounding_box()
    assert panel is not None
    for box in page.locator(".lasthand .shown-row").all():
        row = box.bounding_box()
        assert row is not None and row["y"] + row["height"] <= panel["y"] + 1, "behind the hand"
    assert not hidden, "\n".join(hidden)


#: what the room adds around a drawn table: the sound switch in the status
#: bar, and on a phone the tab bar (Log, Chat, ...) 46 px under the table (the
#: drawn table's stand-in side panel is empty)
AS_IN_A_ROOM = """async (phone) => {
  const { soundToggle, updateMoreCue } = await import('/js/cue.js');
  window.ctx.soundToggle = () => soundToggle(() => window.ctx.rerender());
  if (phone) document.querySelector('.side').style.height = '46px';
  window.ctx.rerender();
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  updateMoreCue(document.getElementById('felt'));
}"""
#: the status bar's height, the hint's rows and its two controls' sizes
MEASURE = """() => {
  const box = (sel) => { const el = document.querySelector(sel);
    if (!el) return null; const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  return { bar: box('.statusbar')[1],
           ok: box('[data-key=guide-ok]'), off: box('[data-key=guide-off]') };
}"""


def first_to_move(game: str, seats: int) -> tuple[Any, int]:
    """The table as dealt, and the seat to move first (its player sees a hint)."""
    from app.games import GAMES

    g = GAMES[game]
    # (Possession at 4, seed 7, deals first to the seat with the "started"
    # mark: its own head must stay one line on a phone, or the lower estates
    # slip under the "more of the table" cue)
    seed = 7
    state = g.new_game(seats, {"cutting": "off"} if game == "posso" else {}, seed)
    while game == "posso" and state.phase != "draw":  # the upcard's Posso window
        state, _ = g.apply(state, None, {"type": "timeout"})
    (seat,) = g.to_act(state)
    return state, seat


@pytest.mark.parametrize("size", ["laptop", "phone"])
@pytest.mark.parametrize(("game", "seats"), CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_a_first_games_hint_costs_the_table_nothing(
    pages: Pages, game: str, seats: int, size: str
) -> None:
    """A first game's hint, on the table as dealt for the player to move
    first: the table's key parts and the hint are all in view and uncovered,
    its controls are 44 px targets, and the status bar is no taller than
    with the hints put away."""
    from app.games import GAMES
    from tests.browser.tables import NAMES, draw, open_table

    g = GAMES[game]
    state, seat = first_to_move(game, seats)
    page = open_table(pages, phone=size == "phone")
    names = NAMES[:seats]
    draw(page, game, g.view(state, seat), g.legal_actions(state, seat), names, seat)
    page.evaluate(AS_IN_A_ROOM, size == "phone")
    page.wait_for_timeout(300)  # the hand lays itself out on the next frame
    shoot(page, f"fits-{game}-{seats}-{size}-hint")
    assert page.locator("[data-key=guide]").count() == 1, "no hint for the first move"
    hidden = page.evaluate(HIDDEN, [*KEY_PARTS[game], ".guide", ".guide-ctl"])
    assert not hidden, "\n".join(hidden)
    hinted = page.evaluate(MEASURE)
    for control in ("ok", "off"):
        width, height = hinted[control]
        assert width >= 44 and height >= 44, (control, hinted[control])
    page.click("[data-key=guide-off]")  # "No more hints": the same table without
    assert page.locator("[data-key=guide]").count() == 0
    plain = page.evaluate(MEASURE)
    assert hinted["bar"] <= plain["bar"] + 0.5, (hinted["bar"], plain["bar"])
