"""Possession against a bot, watched from a phone: draws, properties in the
estates, the ajar pile, and the end of the game as a spectator sees it."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import (
    click_and_wait,
    create_room,
    game_over,
    my_turn,
    take_possession_turn,
    wait_until,
)

pytestmark = pytest.mark.browser


def test_possession_against_a_bot_with_a_spectator(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "possession", bots=1)
    ann.wait_for_selector(".seat-row .tag.bot")
    cleo = pages.open(link.replace(pages.base, ""), phone=True)
    cleo.fill("#invite-name", "Cleo")
    cleo.click("button:has-text('Watch')")
    cleo.wait_for_selector(".lobbypanel")
    click_and_wait(ann, "#start")
    ann.wait_for_selector(".tablebox.possession")
    cleo.wait_for_selector(".tablebox.possession")
    # The watcher has no hand and sees both players' counts.
    assert cleo.locator(".hand").count() == 0
    assert cleo.locator(".opponents .seat").count() == 2

    did: list[str] = []
    for _ in range(300):
        if game_over(ann):
            break
        if my_turn(ann):
            did.append(take_possession_turn(ann))
            if len(did) == 8:
                shoot(ann, "possession-laptop")
                shoot(cleo, "possession-phone")
        else:
            ann.wait_for_timeout(30)
    wait_until(lambda: game_over(ann) and game_over(cleo), 30, "the game to end")
    assert "draw" in did
    # Estates are scored by their cards; the watcher sees the same result.
    ann.wait_for_selector(".result")
    cleo.wait_for_selector(".result")
    places = ann.locator(".result .places").inner_text()
    assert places == cleo.locator(".result .places").inner_text()
    shoot(ann, "possession-over-laptop")
