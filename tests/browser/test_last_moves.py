"""Moves you can follow: each seat shows its last move until its next, the
latest mover's line flashes once, and not under prefers-reduced-motion."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room, my_turn, take_bigtwo_turn, wait_until

pytestmark = pytest.mark.browser

#: the latest line's animation, and what decides it: the media query, the
#: line's classes and the stylesheets the page holds (with their rule counts)
LATEST = """() => {
  const e = document.querySelector(".opponents .lastmove.latest");
  return {
    animation: e ? getComputedStyle(e).animationName : null,
    reduce: matchMedia("(prefers-reduced-motion: reduce)").matches,
    classes: e ? e.className : null,
    sheets: [...document.styleSheets].map((s) => `${s.href} ${s.cssRules.length}`),
  };
}"""


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
    # Read while the line is marked: once (make test, 2026-12) it read 'none'
    # with motion on, not reproduced in 45 runs quiet or loaded, so the line
    # gets a few seconds (with motion on; under reduced motion it never
    # flashes) and the failure says what the page had.
    want = "none" if reduced else "move-in"
    seen: list[dict[str, object]] = []

    def flashes_as_asked() -> bool:
        seen.append(page.evaluate(LATEST))
        assert not (reduced and seen[-1]["animation"] == "move-in"), seen[-1]  # not once
        return seen[-1]["animation"] == want

    try:
        wait_until(flashes_as_asked, 5, f"the latest line's animation to be {want!r}")
    except AssertionError as e:
        raise AssertionError(f"{e}; first and last read: {seen[0]} {seen[-1]}") from None
    assert seen[-1]["reduce"] is reduced
    shoot(page, f"last-moves-{'reduced' if reduced else 'motion'}")
