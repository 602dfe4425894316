"""Coming back in a new tab (issue 21, item 7): the log shows what was said
before and what happened while no tab was open.  And the turn is noticed:
the tab's title says so, and the chime (off until switched on) plays."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import (
    click_and_wait,
    create_room,
    join_by_link,
    my_turn,
    take_possum_turn,
    wait_until,
)

pytestmark = pytest.mark.browser


def log_lines(page: Any) -> list[str]:
    return list(page.eval_on_selector_all(".log .lines li", "els => els.map(e => e.textContent)"))


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_a_new_tab_shows_the_log_it_missed_and_the_turn_is_noticed(pages: Pages, size: str) -> None:
    phone = size == "phone"
    ann = pages.open("/", phone=phone)
    link = create_room(ann, "Ann", "possum")
    bob = pages.open(link.replace(pages.base, ""), phone=not phone)
    join_by_link(bob, "Bob")
    ann.wait_for_selector(".seat-row:has-text('Bob') .dot.on")
    click_and_wait(ann, "#start")
    ann.wait_for_selector(".tablebox.possum")
    ann.click("[data-key=sound]")  # switch the chime on (it plays once to be heard)
    assert ann.get_attribute("[data-key=sound]", "aria-pressed") == "true"
    chimes = int(ann.evaluate("() => Number(document.body.dataset.chimed || 0)"))

    # Play until the turn has come to Ann after Bob moved (with the chime on),
    # she has moved, and it is Bob's turn.
    ann_moved = bob_moved = False
    for _ in range(40):
        wait_until(lambda: my_turn(ann) or my_turn(bob), 15, "someone's turn")
        if my_turn(ann):
            assert ann.title().startswith("● Your turn")
            take_possum_turn(ann)
            ann_moved = bob_moved
        elif ann_moved:
            break
        else:
            take_possum_turn(bob)
            bob_moved = True
    assert ann_moved and my_turn(bob)
    assert int(ann.evaluate("() => Number(document.body.dataset.chimed || 0)")) > chimes
    assert not ann.title().startswith("●")
    before = log_lines(ann)
    assert before, "Ann's log is empty after her move"
    context = ann.context
    ann.close()

    # While Ann has no tab open, Bob moves.
    take_possum_turn(bob)

    again = context.new_page()
    again.goto(link)
    again.wait_for_selector(".tablebox.possum")
    again.wait_for_function(
        f"() => document.querySelectorAll('.log .lines li').length > {len(before)}"
    )
    now = log_lines(again)
    assert now[: len(before)] == before, "the earlier log is shown first"
    news = now[len(before) :]
    assert any("Bob" in line for line in news), news
    shoot(again, f"issue21-7-new-tab-log-{size}")
