"""In view at decision time: what the issue's friends found cut off or
covered, each checked by its box lying inside the viewport (or its panel)
and `elementFromPoint` hitting it, at 1280x800 and 390x844; pictures to
$SCREENSHOTS_DIR (artifacts/screenshots/ otherwise)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room
from tests.browser.test_table_fits import HIDDEN

pytestmark = pytest.mark.browser


def posso_room(page: Any, seats: int) -> None:
    page.evaluate("() => localStorage.setItem('cardroom:pref:guide', JSON.stringify('off'))")
    create_room(page, "Ann", "posso", settings={"bot_delay": "10"}, bots=seats - 1)
    page.wait_for_function(
        f"() => document.querySelectorAll('.seat-row .dot.bot').length === {seats - 1}"
    )
    page.click("#start")
    page.wait_for_selector(".felt.game-posso .hand .card")


#: each part's right edge against its panel's: the parts not inside it
OUTSIDE = """([sel, panel]) => {
  const p = document.querySelector(panel).getBoundingClientRect();
  return [...document.querySelectorAll(sel)].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.right > p.right + 0.5 || r.left < p.left - 0.5;
  }).map((el) => el.textContent.trim());
}"""


@pytest.mark.parametrize("seats", [4, 5])
def test_the_side_panels_tabs_and_score_sheet_fit_at_1280(pages: Pages, seats: int) -> None:
    page = pages.open("/")
    posso_room(page, seats)
    tabs = page.eval_on_selector_all(".side .tab", "els => els.map(e => e.dataset.tab)")
    assert "evening" in tabs and "sheet" in tabs, tabs
    hidden = page.evaluate(HIDDEN, [".side .tab"])
    assert not hidden, "\n".join(hidden)
    page.click("[data-tab=sheet]")
    page.wait_for_selector(".side table.sheet thead th")
    shoot(page, f"in-view-posso-{seats}-sheet-laptop")
    # every player's column inside the panel (the sheet's paper scrolls only
    # when it cannot fit, and then its scroll bar shows)
    outside = page.evaluate(OUTSIDE, [".side table.sheet thead th", ".side .paper"])
    if seats <= 4:
        assert not outside, f"columns off the panel: {outside}"
    else:
        scrolls = page.evaluate(
            "() => { const p = document.querySelector('.side .paper');"
            " return p.scrollWidth > p.clientWidth && getComputedStyle(p).overflowX; }"
        )
        assert not outside or scrolls in ("auto", "scroll"), outside


def test_every_tab_of_the_side_panel_is_in_view_on_a_phone(pages: Pages) -> None:
    """A Posso room has the most tabs (Log, Score sheet, Chat, Seats,
    Evening): on a phone the bar shows them all, each label whole, so no tab
    hides past an edge that gives no sign of it."""
    page = pages.open("/", phone=True)
    posso_room(page, 4)
    tabs = page.eval_on_selector_all(".side .tab", "els => els.map(e => e.dataset.tab)")
    assert len(tabs) == 5, tabs
    shoot(page, "in-view-posso-tabs-phone")
    hidden = page.evaluate(HIDDEN, [".side .tab"])
    assert not hidden, "\n".join(hidden)
    cut = page.evaluate(
        """() => { const bar = document.querySelector('.side .tabs');
          const cut = [...bar.querySelectorAll('.tab')]
            .filter((t) => t.scrollWidth > t.clientWidth);
          return [bar.scrollWidth - bar.clientWidth, cut.map((t) => t.textContent)]; }"""
    )
    assert cut == [0, []], f"the bar scrolls by {cut[0]} px; labels cut: {cut[1]}"


@pytest.mark.parametrize("hand", [2, 9])
def test_the_hands_requirement_is_whole_on_a_phone(pages: Pages, hand: int) -> None:
    from app.games.posso.rules import REQUIREMENTS

    page = pages.open("/", phone=True)
    page.evaluate("() => localStorage.setItem('cardroom:pref:guide', JSON.stringify('off'))")
    create_room(
        page,
        "Ann",
        "posso",
        options={"start_hand": str(hand)},
        settings={"bot_delay": "10"},
        bots=2,
    )
    page.wait_for_function("() => document.querySelectorAll('.seat-row .dot.bot').length === 2")
    page.click("#start")
    page.wait_for_selector(".felt.game-posso .hand .card")
    page.wait_for_timeout(300)
    shoot(page, f"in-view-posso-requirement-{hand}-phone")
    detail = page.locator(".statusbar .st-title .muted-l")
    assert REQUIREMENTS[hand].text in detail.inner_text()
    cut = detail.evaluate("e => e.scrollWidth > e.clientWidth + 0.5")
    assert not cut, "the requirement is cut short"
    hidden = page.evaluate(HIDDEN, [".statusbar .st-title .muted-l", ".hand"])
    assert not hidden, "\n".join(hidden)


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_the_more_below_cue_covers_nothing(pages: Pages, size: str) -> None:
    """The "more of the table below" button stands on its own line between
    the table and the hand panel: nothing of the table is under it."""
    from tests.browser.test_table_items import many_melds_table

    page = many_melds_table(pages, size)
    shoot(page, f"in-view-morecue-{size}")
    box, area, panel = (
        page.locator(sel).bounding_box() for sel in (".morecue", ".tablearea", ".mearea")
    )
    assert box and area and panel
    assert box["y"] >= area["y"] + area["height"] - 0.5, (box, area)  # below the table
    assert box["y"] + box["height"] <= panel["y"] + 0.5, (box, panel)  # above the hand
    hidden = page.evaluate(HIDDEN, [".morecue", ".statusbar"])
    assert not hidden, "\n".join(hidden)


def test_possos_hand_results_close_by_themselves_at_the_new_hands_first_discard(
    pages: Pages,
) -> None:
    """ "Hand N is over" shows as the next hand begins, and goes by itself at
    that hand's first discard: it no longer pushes the pile and melds down
    for the rest of the hand."""
    from app.games.posso import POSSO
    from tests.browser.tables import NAMES, draw, open_table
    from tests.browser.test_table_fits import posso_after_hand_one

    state = posso_after_hand_one()
    page = open_table(pages)
    seat = state.ring[state.turn]
    draw(page, "posso", POSSO.view(state, seat), POSSO.legal_actions(state, seat), NAMES, seat)
    assert page.locator(".lasthand").count() == 1
    pile = len(state.pile)
    while len(state.pile) <= pile:  # play on to the new hand's first discard
        acting = sorted(POSSO.to_act(state))
        if not acting:
            state, _ = POSSO.apply(state, None, {"type": "timeout"})
            continue
        legal = POSSO.legal_actions(state, acting[0])
        action = next((a for a in legal if a["type"] in ("pass_posso", "draw")), legal[0])
        if action["type"] == "draw":
            action = {"type": "draw", "source": "stack"}
        state, _ = POSSO.apply(state, acting[0], action)
    assert state.hand_no == 2 and state.last_hand is not None
    draw(page, "posso", POSSO.view(state, seat), POSSO.legal_actions(state, seat), NAMES, seat)
    assert page.locator(".lasthand").count() == 0
    shoot(page, "in-view-posso-results-closed")


def bot_played(name: str, seats: int, options: dict[str, Any], seed: int) -> Iterator[Any]:
    """A game played to its end by normal bots from deal `seed` (the room's
    timers running out at once, and Posso's windows closing unanswered):
    each position where a seat is to move, then the final one."""
    import random

    from app.bots import bot_for
    from app.games import GAMES

    game, bot, rng = GAMES[name], bot_for(name), random.Random(seed)
    state = game.new_game(seats, options, seed)
    while game.result(state) is None:
        acting = sorted(game.to_act(state))
        if not acting or getattr(state, "phase", None) == "posso_window":
            state, _ = game.apply(state, None, {"type": "timeout"})
            continue
        yield state
        seat = acting[0]
        action = bot.choose(game.view(state, seat), game.legal_actions(state, seat), seat, rng)
        state, _ = game.apply(state, seat, action)
    yield state


def finished_posso(seats: int) -> Any:
    """A Posso game of `seats` played to its end from hand ten by normal bots."""
    opts = {"start_hand": 10, "cutting": "off", "reshuffles": 0}
    *_, over = bot_played("posso", seats, opts, 3)
    return over


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_possos_hands_at_the_end_are_all_in_view_when_the_game_is_over(
    pages: Pages, size: str
) -> None:
    from app.games.posso import POSSO
    from tests.browser.tables import NAMES, draw, open_table

    state = finished_posso(4)
    page = open_table(pages, phone=size == "phone")
    draw(page, "posso", POSSO.view(state, 0), [], NAMES, 0)
    page.wait_for_timeout(300)
    shoot(page, f"in-view-posso-over-{size}")
    assert page.locator(".shown .shown-row").count() == 4
    # every hand whole, to its last card, at both sizes (on a phone 16 cards
    # once took two lines a hand, and the fourth hand's second lay below the fold)
    parts = [".shown .shown-row", ".shown .mini > .card:last-child"]
    hidden = page.evaluate(HIDDEN, parts)
    assert not hidden, "\n".join(hidden)
    clipped = page.evaluate(
        """(sel) => { const area = document.querySelector('.tablearea').getBoundingClientRect();
          return [...document.querySelectorAll(sel)].filter(
            (e) => e.getBoundingClientRect().bottom > area.bottom + 0.5).length; }""",
        ", ".join(parts),
    )
    assert clipped == 0, f"{clipped} below the table's fold"


def busiest_possession_turn(seats: int, seed: int = 5, *, extend: bool = False) -> Any:
    """Possession played to its end by normal bots from deal `seed`: the
    position where seat 0 puts down with the most properties on the table
    (with `extend`: where it can also add a card to a property)."""
    from app.games import GAMES

    game = GAMES["possession"]
    turns = [
        state
        for state in bot_played("possession", seats, {}, seed)
        if 0 in game.to_act(state)
        and not any(a["type"] == "draw" for a in game.legal_actions(state, 0))
        and (not extend or any(a["type"] == "extend" for a in game.legal_actions(state, 0)))
    ]
    return max(turns, key=lambda state: len(game.view(state, 0)["properties"]))


#: the estates whose foot lies below the table's (under the hand panel)
BELOW_THE_FOLD = """() => {
  const fold = document.querySelector('.tablearea').getBoundingClientRect().bottom;
  return [...document.querySelectorAll('.estate')]
    .filter((e) => e.getBoundingClientRect().bottom > fold + 0.5)
    .map((e) => e.querySelector('.zone-title').textContent);
}"""


#: Possession's seat counts and sizes whose busiest put-down is all in view
ESTATE_CASES = [(n, size) for size in ("laptop", "phone") for n in (2, 3, 4)]


@pytest.mark.parametrize(("seats", "size"), ESTATE_CASES)
def test_every_possession_estate_is_in_view_at_your_decision(
    pages: Pages, seats: int, size: str
) -> None:
    """At your put-down, at the busiest table of a game played by bots, the
    others' estates (what a steal needs), their seats, the piles and your hand
    are all in view, none under the hand panel."""
    from app.games import GAMES
    from tests.browser.tables import NAMES, draw, open_table
    from tests.browser.test_table_fits import AS_IN_A_ROOM, KEY_PARTS

    game = GAMES["possession"]
    state = busiest_possession_turn(seats)
    page = open_table(pages, phone=size == "phone")
    page.evaluate("() => localStorage.setItem('cardroom:pref:guide', JSON.stringify('off'))")
    draw(page, "possession", game.view(state, 0), game.legal_actions(state, 0), NAMES[:seats], 0)
    page.evaluate(AS_IN_A_ROOM, size == "phone")
    page.wait_for_timeout(300)
    shoot(page, f"in-view-possession-{seats}-decision-{size}")
    assert page.locator(".estate").count() == seats
    hidden = page.evaluate(HIDDEN, KEY_PARTS["possession"])
    assert not hidden, "\n".join(hidden)
    below = page.evaluate(BELOW_THE_FOLD)
    assert not below, f"estates under the hand panel: {below}"


@pytest.mark.parametrize(("seats", "size"), ESTATE_CASES)
def test_a_picked_card_leaves_the_estates_and_its_target_in_view(
    pages: Pages, seats: int, size: str
) -> None:
    """With a card picked that can join a property, the hand panel grows (its
    buttons, its hint): the estates, and the target's Add or Steal button,
    must still be in view, none under the panel."""
    from app.games import GAMES
    from tests.browser.tables import NAMES, draw, open_table
    from tests.browser.test_table_fits import AS_IN_A_ROOM, KEY_PARTS

    game = GAMES["possession"]
    state = busiest_possession_turn(seats, extend=True)
    legal = game.legal_actions(state, 0)
    move = next(a for a in legal if a["type"] == "extend" and len(a["cards"]) == 1)
    page = open_table(pages, phone=size == "phone")
    page.evaluate("() => localStorage.setItem('cardroom:pref:guide', JSON.stringify('off'))")
    draw(page, "possession", game.view(state, 0), legal, NAMES[:seats], 0)
    page.evaluate(AS_IN_A_ROOM, size == "phone")
    card, prop = move["cards"][0], move["property"]
    page.locator(f'.hand button.card[data-code="{card}"]').first.click(position={"x": 6, "y": 24})
    target = f'[data-key="extend:{prop}"]'
    page.wait_for_selector(target)
    page.wait_for_timeout(300)
    shoot(page, f"in-view-possession-{seats}-picked-{size}")
    hidden = page.evaluate(HIDDEN, [*KEY_PARTS["possession"], target])
    assert not hidden, "\n".join(hidden)
    below = page.evaluate(BELOW_THE_FOLD)
    assert not below, f"estates under the hand panel: {below}"
