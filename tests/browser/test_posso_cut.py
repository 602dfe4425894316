"""Posso's cut in the page: a cut that can change nothing (hand 1) asks the
dealer nothing and the log and sheet say why there was none, while a cut
that matters shows the deck's edge to the dealer.  Both sizes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.games.posso import POSSO
from tests.browser.conftest import Pages, shoot
from tests.browser.tables import draw, open_table

pytestmark = pytest.mark.browser

NAMES = ["Ann", "Bob", "Cleo"]


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_a_moot_cut_asks_nothing_and_a_cut_that_matters_asks_the_dealer(
    pages: Pages, size: str
) -> None:
    page = open_table(pages, phone=size == "phone")
    state = POSSO.new_game(3, {"first_dealer": 0}, 8)  # hand 1: every total is 0
    assert POSSO.timer(state) == "cut_moot"
    view = POSSO.view(state, 0)
    draw(page, "posso", view, POSSO.legal_actions(state, 0), NAMES, 0)
    assert page.locator(".deckedge, .cutter, [data-key=cut]").count() == 0
    assert page.locator(".st-prompt").inner_text() == "Dealing"
    assert "cutting" not in page.locator(".tablebox").inner_text()
    shoot(page, f"issue21-8-moot-cut-{size}")
    # once it has run out: no "missed the cut" anywhere
    after, events = POSSO.apply(state, None, {"type": "timeout"})
    line = page.evaluate(
        "(e) => window.table.describe(e, window.ctx)",
        next(e for e in events if e["type"] == "cut"),
    )
    assert line["text"] == "Hand 1: no cut, as a hit could not change your score."
    sheet = page.evaluate(
        """async (cut) => (await import('/js/sheet.js')).cutText(cut, ['Ann', 'Bob', 'Cleo'], 0)""",
        after.cut,
    )
    assert sheet == "no cut: it could not change Ann's score"
    draw(page, "posso", POSSO.view(after, 0), [], NAMES, 0)
    assert page.locator(".cutresult").count() == 0
    # behind the leader, the dealer is asked to cut
    matters = replace(state, totals=[30, 0, 10])
    draw(page, "posso", POSSO.view(matters, 0), POSSO.legal_actions(matters, 0), NAMES, 0)
    page.locator(".deckedge").wait_for()
    assert page.locator(".st-prompt").inner_text() == "Your cut"
    shoot(page, f"issue21-8-cut-that-matters-{size}")
