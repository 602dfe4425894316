"""Play my turns this hand: a toggle by the hand hands a person's turns to
the bot until the hand ends, the whole table sees it on the seat and in the
log, and one tap takes the turns back."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import (
    create_room,
    game_over,
    join_by_link,
    my_turn,
    take_possum_turn,
    wait_until,
)

pytestmark = pytest.mark.browser

TOGGLE = ".mehead [data-key=autoplay]"


def pressed(page: Any) -> str | None:
    return page.locator(TOGGLE).get_attribute("aria-pressed")


def in_view(page: Any, selector: str) -> bool:
    """The element's box lies inside the viewport and a tap there reaches it."""
    return bool(
        page.evaluate(
            """(sel) => {
              const el = document.querySelector(sel);
              if (!el) return false;
              const r = el.getBoundingClientRect();
              const inside = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight
                && r.right <= innerWidth && r.width > 0 && r.height > 0;
              const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
              return inside && !!hit && (hit === el || el.contains(hit));
            }""",
            selector,
        )
    )


def test_the_toggle_hands_my_turns_to_the_bot_and_one_tap_takes_them_back(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "possum")
    bob = pages.open(link.replace(pages.base, ""), phone=True)
    join_by_link(bob, "Bob")
    ann.wait_for_selector(".seat-row:has-text('Bob') .dot.on")
    ann.click("#start")
    for page in (ann, bob):
        page.wait_for_selector(".tablebox.possum")
        page.wait_for_selector(TOGGLE)
        assert pressed(page) == "false"
        assert in_view(page, TOGGLE), "the toggle by the hand is in view"

    ann.click(TOGGLE)
    ann.wait_for_selector(f"{TOGGLE}[aria-pressed=true]")
    assert "Take my turns back" in ann.locator(TOGGLE).inner_text()
    # the table sees it: on Ann's seat, and in the log
    bob.wait_for_selector(".seat[data-seat='0'] .chip.autoplay")
    # (the phone's log sits in a closed panel: there, not shown)
    bob.wait_for_selector(
        ".log .lines li:has-text('Ann lets a bot play their turns')", state="attached"
    )
    shoot(bob, "autoplay-seen-phone")
    shoot(ann, "autoplay-on-laptop")

    # Bob plays his own turns; each of Ann's is the bot's, with Ann here
    for _ in range(3):
        wait_until(lambda: my_turn(bob) or game_over(bob), 30, "Bob's turn")
        if game_over(bob):
            break
        take_possum_turn(bob)
    # the bot plays Ann's turn after Bob's (at once: the tables here play bots
    # with no delay, but the move still takes a moment on a loaded machine)
    wait_until(
        lambda: game_over(bob) or my_turn(bob) or not my_turn(ann), 30, "the bot to play for Ann"
    )
    assert pressed(ann) == "true" or game_over(ann)
    if game_over(ann):
        pytest.fail("the game ended before the toggle could be taken back")

    ann.click(TOGGLE)
    ann.wait_for_selector(f"{TOGGLE}[aria-pressed=false]")
    bob.wait_for_selector(
        ".log .lines li:has-text('Ann plays their own turns again')", state="attached"
    )
    assert bob.locator(".seat[data-seat='0'] .chip.autoplay").count() == 0
    # and her turn waits for her again
    wait_until(lambda: my_turn(bob) or my_turn(ann), 30, "someone's turn")
    if my_turn(bob):
        take_possum_turn(bob)
    wait_until(lambda: my_turn(ann), 30, "Ann's turn, hers to play")
    ann.wait_for_timeout(500)  # the bot's delay is 0: a bot would have played by now
    assert my_turn(ann)

    # the phone's toggle works the same
    bob.click(TOGGLE)
    bob.wait_for_selector(f"{TOGGLE}[aria-pressed=true]")
    ann.wait_for_selector(".seat[data-seat='1'] .chip.autoplay")
    shoot(bob, "autoplay-on-phone")
