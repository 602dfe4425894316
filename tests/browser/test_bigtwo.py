"""Big Two in two browsers with two bots: the trick, passes and places show,
and only cards that can complete a legal play light up."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import click_and_wait, create_room, join_by_link, my_turn, take_bigtwo_turn

pytestmark = pytest.mark.browser


def test_bigtwo_table_plays_and_refuses_with_the_servers_reason(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "bigtwo")
    bob = pages.open(link.replace(pages.base, ""), phone=True)
    join_by_link(bob, "Bob")
    ann.wait_for_selector(".seat-row:has-text('Bob')")
    click_and_wait(ann, "#start")  # Big Two fills the two empty seats with bots
    for page in (ann, bob):
        page.wait_for_selector(".tablebox.bigtwo")
        assert page.locator(".hand .card").count() == 13
        assert page.locator(".opponents .seat").count() == 3

    # Cards are buttons: the keyboard picks them (Space, Enter) too.
    turn = ann if my_turn(ann) else bob if my_turn(bob) else None
    if turn is not None:
        card = turn.locator(".hand button.card").first
        card.focus()
        picked = turn.locator(".hand button.card[aria-pressed=true]")
        turn.keyboard.press("Space")
        assert picked.count() == 1
        assert "picked" in str(picked.get_attribute("aria-label"))
        turn.keyboard.press("Enter")
        assert picked.count() == 0

    # An illegal pick is refused with the server's own words, and nothing moves.
    refused = False
    moves = 0
    for _ in range(200):
        for page in (ann, bob):
            if not my_turn(page):
                continue
            if not refused and page.locator(".hand button.card.dim").count():
                page.locator(".hand button.card.dim").first.click(position={"x": 6, "y": 24})
                before = page.locator(".hand .card").count()
                page.click("[data-key=play]")
                page.wait_for_selector(".actmsg.error")
                assert page.locator(".actmsg.error").inner_text().strip()
                assert page.locator(".hand .card").count() == before
                page.click("[data-key=clear]")
                refused = True
            take_bigtwo_turn(page)
            moves += 1
        if moves >= 6 and refused:
            break
        ann.wait_for_timeout(30)
    assert moves >= 6
    # The trick on the table names who played it.
    ann.wait_for_selector(".trick, .hint-box")
    shoot(ann, "bigtwo-laptop")
    shoot(bob, "bigtwo-phone")
