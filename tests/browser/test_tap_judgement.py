"""How tests/browser/test_lost_taps.py judges a tap on a hand card, on a
drawn Posso table in a phone's page (no room, no timing): a finger's tap
picks the card; a view of the same deal keeps the pick; a new deal takes it
away and that is no lost tap; a view of the same deal that drops the pick (a
page bug, planted here) is one."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.browser.conftest import Pages
from tests.browser.tables import HARNESS, NAMES, draw
from tests.browser.test_lost_taps import RECORDER, Tapper, card_tap_lost
from tests.browser.test_table_fits import posso_after_hand_one

pytestmark = pytest.mark.browser

#: the table as a view arrives: the page's version, then a redraw
ARRIVE = """([view, v, drop]) => {
  if (drop) window.ctx.ui.selected = [];
  window.ctx.game = view;
  document.body.dataset.v = String(v);
  window.ctx.rerender();
}"""


def tapped(pages: Pages) -> tuple[Any, dict[str, Any], str]:
    """A phone's page with a Posso table waiting on another seat, and a hand
    card the finger has just tapped (its pick on)."""
    from app.games.posso import POSSO

    state = posso_after_hand_one()
    seat = next(s for s in range(state.seats) if s not in POSSO.to_act(state))
    view = POSSO.view(state, seat)
    page = pages.open("/", phone=True)
    page.context.add_init_script(RECORDER)
    page.reload()
    page.wait_for_selector("#create-name")
    page.evaluate(HARNESS)
    draw(page, "posso", view, [], NAMES, seat)
    page.evaluate(ARRIVE, [view, 10, False])
    key = page.evaluate(
        "() => [...document.querySelectorAll('.hand button.card')].at(-1).dataset.key"
    )
    assert Tapper(page, touch=True).tap(f'[data-key="{key}"]')
    assert page.get_attribute(f'[data-key="{key}"]', "aria-pressed") == "true"
    return page, view, key


def judged(page: Any, key: str) -> str | None:
    return card_tap_lost(key, page.evaluate("() => window.__pickNow()"))


def test_a_pick_kept_through_the_views_of_its_deal_is_a_kept_tap(pages: Pages) -> None:
    page, view, key = tapped(pages)
    page.evaluate(ARRIVE, [view, 11, False])
    page.evaluate(ARRIVE, [view, 12, False])
    assert judged(page, key) is None


def test_a_pick_a_new_deal_took_away_is_no_lost_tap(pages: Pages) -> None:
    page, view, key = tapped(pages)
    deal = copy.deepcopy(view)
    deal["hand_no"] += 1  # the same cards dealt again: the card is there, unpicked
    page.evaluate(ARRIVE, [deal, 11, False])
    # read from the card alone (the old judgement), this was a lost tap
    assert page.get_attribute(f'[data-key="{key}"]', "aria-pressed") == "false"
    assert judged(page, key) is None


def test_a_pick_a_view_of_its_deal_dropped_is_a_lost_tap(pages: Pages) -> None:
    page, view, key = tapped(pages)
    page.evaluate(ARRIVE, [view, 11, True])  # planted: the view drops the picks
    why = judged(page, key)
    assert why is not None and "taken back by the view of v11" in why, why
