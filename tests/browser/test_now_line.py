""" "What can I do now?": every table says the choice in front of it - the
player's own, or whom the table waits for and on what - drawn from real
engine positions; and a first game's guided hints, one per phase, put away
with "Got it" (remembered) or all at once with "No more hints"."""

from __future__ import annotations

from typing import Any

import pytest

from app.games import GAMES
from app.games.posso import POSSO
from tests.browser.conftest import Pages, shoot
from tests.browser.tables import HANDS_OF_THREE as HANDS
from tests.browser.tables import HARNESS, NAMES, draw, open_table
from tests.games.posso.helpers import act, game

pytestmark = pytest.mark.browser


def now(page: Any) -> str:
    return str(page.locator("[data-key=now]").inner_text())


def show(page: Any, name: str, state: Any, seat: int) -> None:
    g = GAMES[name]
    legal = g.legal_actions(state, seat) if seat in g.to_act(state) else []
    draw(page, name, g.view(state, seat), legal, NAMES[: len(g.view(state, None)["counts"])], seat)


def posso_positions() -> dict[str, Any]:
    window = game(3, HANDS, "QS", ["KS", "KH"])  # dealer 0: seat 1 next
    drawing = window
    for seat in sorted(window.eligible):
        drawing, _ = act(drawing, seat, type="pass_posso")
    playing, _ = act(drawing, 1, type="draw", source="stack")
    return {"window": window, "draw": drawing, "play": playing}


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_every_table_says_what_can_be_done_now(pages: Pages, size: str) -> None:
    page = open_table(pages, phone=size == "phone")
    page.evaluate("() => localStorage.setItem('cardroom:pref:guide', JSON.stringify('off'))")
    p = posso_positions()
    show(page, "posso", p["window"], 2)
    assert now(page) == "Now: Posso? Call it to take the Q♠ and a penalty card, or pass."
    show(page, "posso", p["window"], 1)
    assert now(page) == (
        "Now: Waiting for Ann and Cleo to call Posso or pass; "
        "then your turn starts (you may take the Q♠)."
    )
    show(page, "posso", p["draw"], 1)
    assert now(page) == "Now: Your turn: draw from the stack or take the pile."
    show(page, "posso", p["draw"], 0)
    assert now(page) == "Now: Waiting for Bob to draw."
    show(page, "posso", p["play"], 1)
    assert now(page).startswith("Now: Your turn: go down with two threes of a kind")
    shoot(page, f"now-line-posso-{size}")
    show(page, "posso", p["play"], 2)
    assert now(page) == "Now: Waiting for Bob to play and discard."

    for name, yours, theirs in [
        ("bigtwo", "Now: Your lead: play any single", "Now: Waiting for {} to lead."),
        ("possession", "Now: Your turn: pick up the top card", "Now: Waiting for {} to pick up"),
        ("possum", "Now: Your turn:", "Now: Waiting for {} to play on the"),
    ]:
        g = GAMES[name]
        state = g.new_game(4 if name == "bigtwo" else 3, {}, 7)
        (turn,) = g.to_act(state)
        show(page, name, state, turn)
        assert now(page).startswith(yours), (name, now(page))
        other = (turn + 1) % len(g.view(state, None)["counts"])
        show(page, name, state, other)
        assert now(page).startswith(theirs.format(NAMES[turn])), (name, now(page))
        shoot(page, f"now-line-{name}-{size}")


def test_a_first_game_offers_one_hint_per_phase_and_remembers(pages: Pages) -> None:
    page = open_table(pages)
    p = posso_positions()
    show(page, "posso", p["draw"], 1)
    guide = page.locator("[data-key=guide]")
    assert guide.get_attribute("data-phase") == "draw"
    assert "Each turn starts with a card" in guide.inner_text()
    shoot(page, "guide-posso-draw")
    page.click("[data-key=guide-ok]")
    assert guide.count() == 0
    show(page, "posso", p["draw"], 1)  # the same phase again: put away for good
    assert guide.count() == 0
    page.reload()  # and across a refresh (localStorage)
    page.wait_for_selector("#create-name")
    page.evaluate(HARNESS)
    show(page, "posso", p["draw"], 1)
    assert page.locator("[data-key=now]").count() == 1 and guide.count() == 0
    show(page, "posso", p["play"], 1)  # the next phase has its own hint
    assert guide.get_attribute("data-phase") == "godown"
    show(page, "posso", p["play"], 2)  # none while waiting for someone else
    assert guide.count() == 0
    show(page, "posso", p["play"], 1)
    page.click("[data-key=guide-off]")  # no more hints, in any game
    assert guide.count() == 0
    show(page, "posso", p["window"], 2)
    g = GAMES["bigtwo"]
    state = g.new_game(4, {}, 7)
    (turn,) = g.to_act(state)
    show(page, "bigtwo", state, turn)
    assert guide.count() == 0 and now(page).startswith("Now: Your lead")


def test_spectators_and_replays_get_the_line_without_hints(pages: Pages) -> None:
    page = open_table(pages)
    state = posso_positions()["draw"]
    draw(page, "posso", POSSO.view(state, None), [], NAMES[:3], None)
    assert now(page) == "Now: Waiting for Bob to draw."
    assert page.locator("[data-key=guide]").count() == 0
