"""Moves you can follow: each seat shows its last move until its next, the
latest mover's line flashes once, and not under prefers-reduced-motion."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room, my_turn, take_bigtwo_turn, wait_until

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("reduced", [False, True], ids=["motion", "reduced-motion"])
def test_each_seat_shows_its_last_move(pages: Pages, reduced: bool) -> None:
    page = pages.open("/")
    if reduced:
        page.emulate_media(reduced_motion="reduce")
    create_room(page, "Ann", "bigtwo", settings={"bot_delay": "0.3"})
    page.click("#start")  # Big Two fills the empty seats with bots

    def three_moved() -> bool:
        if my_turn(page):
            take_bigtwo_turn(page)
        return page.locator(".opponents .seat .lastmove").count() == 3

    wait_until(three_moved, 60, "every bot to have moved")
    lines = page.eval_on_selector_all(".opponents .lastmove", "els => els.map(e => e.textContent)")
    assert all(line.startswith(("played ", "passed", "has control")) for line in lines), lines
    # the latest move is marked once its view is drawn (a bot may move meanwhile)
    page.wait_for_selector(".opponents .lastmove.latest")
    assert page.locator(".opponents .lastmove.latest").count() == 1
    animation = page.eval_on_selector(
        ".opponents .lastmove.latest", "e => getComputedStyle(e).animationName"
    )
    assert animation == ("none" if reduced else "move-in")
    shoot(page, f"last-moves-{'reduced' if reduced else 'motion'}")
