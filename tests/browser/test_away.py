"""Someone closes their browser mid-game: the others see it at once, in the log
and on the seat, with a countdown to when a bot takes the seat over."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import click_and_wait, create_room, join_by_link

pytestmark = pytest.mark.browser


def test_an_away_player_shows_in_the_log_and_on_the_seat_with_a_countdown(
    pages: Pages,
) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "possum")
    bob = pages.open(link.replace(pages.base, ""), phone=True)
    join_by_link(bob, "Bob")
    ann.wait_for_selector(".seat-row:has-text('Bob') .dot.on")
    click_and_wait(ann, "#start")
    bob.wait_for_selector(".tablebox.possum")
    bob.context.close()  # Bob's browser goes away mid-game

    ann.wait_for_selector(".log .lines li:has-text('Bob is away.')")
    badge = ann.locator(".seat[data-seat='1'] .chip.away")
    badge.wait_for()
    text = badge.inner_text()
    assert "bot in" in text, text
    # the countdown runs from the default grace of a minute
    ann.wait_for_function(
        "() => /0:5\\d|1:00/.test(document.querySelector(\".seat[data-seat='1'] .chip.away\")"
        ".textContent)"
    )
    assert "Away since" in (badge.get_attribute("title") or "")
    shoot(ann, "away-badge-laptop")
