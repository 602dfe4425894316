"""Posso in two browsers (two players, so two phantoms sit at the table):
the dealer cuts blind along the deck's edge, one player calls Posso on a
phantom's card and the other allows it; and a whole game (started at hand
ten) played to its end, then read back from the score sheet."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import click_and_wait, create_room, game_over, join_by_link, posso_step

pytestmark = pytest.mark.browser

# Long windows: every test answer closes them at once, and no timer decides.
SLOW_WINDOWS = {"posso_window": "10", "posso_answer": "10", "cut": "10"}


def two_players(pages: Pages, **options: str) -> tuple[Any, Any]:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "posso", options=options, settings=SLOW_WINDOWS)
    bob = pages.open(link.replace(pages.base, ""), phone=True)
    join_by_link(bob, "Bob")
    ann.wait_for_selector(".seat-row:has-text('Bob') .dot.on")
    click_and_wait(ann, "#start")
    for page in (ann, bob):
        page.wait_for_selector(".tablebox.posso")
    return ann, bob


def hand_size(page: Any) -> int:
    return int(page.locator(".hand .card").count())


def test_one_player_calls_posso_and_the_other_allows_it(pages: Pages) -> None:
    ann, bob = two_players(pages, start_hand="1")
    # Two players: the phantoms sit between them.
    assert ann.locator(".opponents .seat.phantom").count() == 2
    done: list[str] = []
    caller: Any = None
    before = 0
    for _ in range(60):
        for page in (ann, bob):
            if page.locator(".deckedge").count():
                shoot(page, "posso-cut-" + ("laptop" if page is ann else "phone"))
            if caller is None and page.locator("[data-key=call-posso]").count():
                shoot(page, "posso-window-" + ("laptop" if page is ann else "phone"))
                caller = page
                before = hand_size(page)
            answering = caller is not None and page is not caller
            if answering and page.locator("[data-key=allow]").count():
                # The answer panel names the caller and the card.
                assert "calls Posso on" in page.locator(".callbar").inner_text()
                shoot(page, "posso-answer-" + ("laptop" if page is ann else "phone"))
                assert posso_step(page) == "allow"
                done.append("allowed")
                break
            posso_step(page, call=page is caller or caller is None)
        if done:
            break
    assert done, "no Posso was called and allowed"
    # The caller took the pile card and a penalty card from the stack.
    caller.wait_for_function(
        f"() => document.querySelectorAll('.hand .card').length === {before + 2}"
    )
    for page in (ann, bob):
        log = page.locator(".log .lines").inner_text()
        assert "called Posso!" in log
        assert "allowed" in log

    # Keep begging cards until someone can meet the requirement (two threes
    # of a kind), then go down through the meld-arranging area.
    went_down = None
    for _ in range(300):
        for page in (ann, bob):
            if page.locator("[data-key=suggest]").count():
                page.click("[data-key=suggest]")
                assert page.locator(".staging .meld.staged").count() == 2
                click_and_wait(page, "[data-key=go-down]")
                went_down = page
                break
            posso_step(page)
        if went_down:
            break
    assert went_down is not None, "nobody could go down"
    went_down.wait_for_selector(".meldzone .meld")
    assert went_down.locator(".meldzone .meld").count() == 2
    assert went_down.locator(".mearea .chip.down").count() == 1
    shoot(ann, "posso-laptop")
    shoot(bob, "posso-phone")


@pytest.fixture(scope="module")
def finished_game(browser: Any, server: str) -> Iterator[tuple[Any, Any]]:
    """A whole Posso game, played once for the tests below.

    Hand ten only, with one deck. Both keep calling and allowing Posso, which
    pulls cards off the stack faster than discards return them, until nothing
    is left to take: the hand (and with it the game) ends and everyone scores
    what they hold."""
    pages = Pages(browser, server)
    try:
        ann, bob = two_players(pages, start_hand="10", decks="1")
        steps = 0
        while not (game_over(ann) and game_over(bob)) and steps < 1500:
            acted = False
            for page in (ann, bob):
                if not game_over(page) and posso_step(page):
                    acted = True
                    steps += 1
            if not acted:
                ann.wait_for_timeout(30)
        assert game_over(ann) and game_over(bob), f"the game did not end in {steps} moves"
        assert not pages.errors, pages.errors
        shoot(ann, "posso-over-laptop")
        shoot(bob, "posso-over-phone")
        yield ann, bob
    finally:
        pages.close()


def test_score_sheet_after_a_finished_posso_game(finished_game: tuple[Any, Any]) -> None:
    ann, bob = finished_game
    for page, size in ((ann, "laptop"), (bob, "phone")):
        page.click("[data-tab=sheet]")
        sheet = page.locator(".livesheet table.sheet")
        sheet.wait_for()
        # One line for hand ten with both players' totals, a total row, the
        # chart with a line per player and the 500 line.
        row = sheet.locator("tbody tr:not(.future)")
        assert row.count() == 1
        assert row.first.locator("th .hn").inner_text() == "10"
        cells = sheet.locator("tfoot td").all_inner_texts()
        totals = [int(m.group()) for t in cells if (m := re.match(r"\d+", t.strip()))]
        assert len(totals) == 2 and all(t > 0 for t in totals)
        assert page.locator(".livesheet .chart polyline").count() == 2
        assert page.locator(".livesheet .chart .toilet-line").count() == 1
        shoot(page, f"posso-sheet-{size}")


def test_my_games_shows_the_sheet_and_replays_the_game(
    finished_game: tuple[Any, Any], server: str
) -> None:
    # The same sheet later, from "My games": the paper sheet, the chart, and
    # a replay that steps through the game from the deal.
    ann, _ = finished_game
    ann.click("[data-tab=sheet]")
    live = ann.locator(".livesheet tfoot").inner_text()
    ann.goto(server + "/#history")
    ann.wait_for_selector("table.list tbody tr, .history .err, .history .empty")
    problem = ann.locator(".history .err, .history .empty")
    assert not problem.count(), f"My games shows: {problem.first.inner_text()}"
    # the game's own link: the row's names link to their people's records
    ann.click("table.list tbody tr:has-text('Posso') a[href^='/#game/']")
    ann.wait_for_selector(".sheetbox table.sheet")
    assert ann.locator(".sheetbox tfoot").inner_text() == live
    assert ann.locator(".sheetbox .chart polyline").count() == 2
    ann.wait_for_selector(".replay .felt .tablebox.posso")
    assert ann.locator(".replay .stepinfo").inner_text().startswith("Step 0 of ")
    ann.click("[aria-label='Next step']")
    ann.wait_for_selector(".replay .stepinfo:text-matches('^Step 1 of ')")
    assert ann.locator(".replay .stepevents li").count() >= 1
    ann.locator(".replay").scroll_into_view_if_needed()
    shoot(ann, "history-posso-laptop")
    ann.click("[aria-label='Last step']")
    ann.wait_for_selector(".replay .felt .shown")  # every hand is shown at the end
    shoot(ann, "replay-end-laptop")
