"""Quieter Posso at the table: the two switches under the Posso question, the
note that stands in for the question when a person is not asked, and the
stack rebuilds left this hand - drawn from engine views, then in a real room
where the switch spares the person every window of the hand."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.posso import POSSO
from tests.browser.conftest import Pages, shoot
from tests.browser.play import click_and_wait, create_room, posso_step, wait_until
from tests.browser.tables import HANDS_OF_THREE as HANDS
from tests.browser.tables import NAMES, draw, open_table
from tests.games.posso.helpers import game

pytestmark = pytest.mark.browser


REDRAW_WITH = """(quiet) => {
  window.cmds = [];
  window.ctx.cmd = (c) => { window.cmds.push(c); return Promise.resolve({}); };
  window.ctx.you.quiet = quiet;
  window.ctx.rerender();
}"""


def asked(page: Any) -> bool:
    return bool(page.locator("[data-key=call-posso]").count())


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_the_switches_and_the_rebuilds_left(pages: Pages, size: str) -> None:
    state = game(3, HANDS, "QS", reshuffles=3)
    state.reshuffles = 1
    page = open_table(pages, phone=size == "phone")
    draw(page, "posso", POSSO.view(state, 2), POSSO.legal_actions(state, 2), NAMES[:3], 2)
    assert page.locator("[data-key=rebuilds]").inner_text() == "Stack rebuilds left: 2"

    page.evaluate(REDRAW_WITH, {"hand": None, "helpful": False})
    assert asked(page)
    assert page.locator("[data-key=quiet-hand]").is_visible()
    shoot(page, f"posso-quiet-switches-{size}")
    page.click("[data-key=quiet-hand]")
    assert page.evaluate("() => window.cmds") == [{"type": "posso_quiet", "hand": True}]
    page.click("[data-key=quiet-helpful]")
    assert page.evaluate("() => window.cmds.at(-1)") == {"type": "posso_quiet", "helpful": True}
    # kept for this room only: another room asks again until it is set there
    code = page.evaluate("() => window.ctx.room.code")
    kept = page.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('cardroom:pref:possoHelpful'))"
    )
    assert kept == [f"cardroom:pref:possoHelpful:{code}"]
    assert page.evaluate(f"() => localStorage.getItem('{kept[0]}')") == "true"

    # not asked this hand: a note where the question was, and a way back
    page.evaluate(REDRAW_WITH, {"hand": 1, "helpful": False})
    assert not asked(page)
    note = page.locator(".quietnote").inner_text()
    assert "you pass." in note
    assert page.locator("[data-key=quiet-hand]").inner_text() == "Ask me again"
    shoot(page, f"posso-quiet-not-asked-{size}")
    # only when it helps: the QS cannot help seat 2's hand, so it is not asked
    page.evaluate(REDRAW_WITH, {"hand": None, "helpful": True})
    assert not asked(page) and "cannot help your hand" in page.locator(".quietnote").inner_text()
    # ... while seat 0, holding nines, is asked about a nine
    state = game(3, HANDS, "9D")
    draw(page, "posso", POSSO.view(state, 0), POSSO.legal_actions(state, 0), NAMES[:3], 0)
    page.evaluate(REDRAW_WITH, {"hand": None, "helpful": True})
    assert asked(page)


def test_dont_ask_me_this_hand_spares_the_rest_of_the_hand(pages: Pages) -> None:
    ann = pages.open("/")
    # long windows: only the room's pass for Ann can close one quickly
    create_room(ann, "Ann", "posso", settings={"posso_window": "15"}, bots=2)
    ann.wait_for_function("() => document.querySelectorAll('.seat-row .dot.bot').length === 2")
    click_and_wait(ann, "#start")
    ann.wait_for_selector(".tablebox.posso")
    ann.wait_for_selector("[data-key=rebuilds]")
    assert ann.locator("[data-key=rebuilds]").inner_text() == "Stack rebuilds left: 3"
    # the hand and whether she is asked, read together: a new hand may begin
    # between two reads, and in it she is asked again, as she should be
    now = """() => [document.querySelector('.st-title .muted-l')?.textContent,
                    !!document.querySelector('[data-key=call-posso]')]"""
    hand = None
    for _ in range(40):  # play Ann's turns until a window asks her
        title, asked_now = ann.evaluate(now)
        if asked_now:
            # the hand she skips is read now, while the window waits on her (it
            # cannot end before she answers): read after her answer, it could
            # be the next hand's, in which she is rightly asked again
            hand = title
            break
        if posso_step(ann) is None:
            ann.wait_for_timeout(100)
    assert hand is not None, "no Posso window asked Ann"
    ann.click("[data-key=quiet-hand]")
    # the room passed for her at once: the 15 s window closed within seconds
    wait_until(lambda: not asked(ann), 5, "the window to close")
    turns = 0
    while turns < 4:
        title, asked_now = ann.evaluate(now)
        if title != hand:
            break
        assert not asked_now, "asked again in the hand she asked to be left out of"
        step = posso_step(ann, call=False)
        turns += step == "discard"
        if step is None:
            ann.wait_for_timeout(100)
    assert turns >= 1, "Ann never got to play a turn of the hand"
