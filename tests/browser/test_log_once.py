"""Each thing that happened is logged once: one save of the house rules is
one line, for the host and the others, and a refresh during a game resumes
where the page left off instead of telling the game's story again on top of
the log it kept (docs/protocol.md, "Versions")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Pages
from tests.browser.play import click_and_wait, create_room, join_by_link

pytestmark = pytest.mark.browser

SAVED = "The host changed the game or house rules."


def log_lines(page: Any) -> list[str]:
    return [str(t) for t in page.locator(".log .lines li").all_inner_texts()]


def test_one_save_is_one_line_and_a_refresh_logs_nothing_twice(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "posso", settings={"bot_delay": "0.3"})
    bob = pages.open(link.replace(pages.base, ""), phone=True)
    join_by_link(bob, "Bob")
    ann.wait_for_selector(".seat-row:has-text('Bob') .dot.on")
    ann.click(".hostrules > summary")
    ann.click(".hostrules button:has-text('Save house rules')")
    bob.wait_for_function(
        "() => JSON.stringify(localStorage).includes('changed the game or house rules')"
    )
    ann.reload()  # in the lobby
    ann.wait_for_selector(".lobbypanel")
    click_and_wait(ann, "#start")
    for page in (ann, bob):
        page.wait_for_selector(".tablebox.posso")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.log .lines li')]"
            ".some((li) => li.textContent.includes('you were dealt'))"
        )
    before = log_lines(ann)
    for _ in range(2):  # twice: each refresh would have added a copy
        ann.reload()
        ann.wait_for_selector(".tablebox.posso")
        ann.wait_for_function(
            f"() => document.querySelectorAll('.log .lines li').length >= {len(before)}"
        )
    after = log_lines(ann)
    for lines in (after, log_lines(bob)):
        assert lines.count(SAVED) == 1, lines
        assert lines.count("— Game 1 starts —") == 1, lines
        assert sum("you were dealt" in line for line in lines) == 1, lines
    assert after[: len(before)] == before
