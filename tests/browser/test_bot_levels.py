"""The host adds a strong bot: its level is on its seat in the lobby, in the
log, on the invite page and at the table, for everyone."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import click_and_wait, create_room, join_by_link

pytestmark = pytest.mark.browser


def test_the_host_adds_a_strong_bot_and_everyone_sees_its_level(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "bigtwo")
    ann.select_option("#bot-level", "strong")
    click_and_wait(ann, "#add-bot")
    tag = ann.locator(".seat-row .tag.bot")
    tag.wait_for()
    assert tag.inner_text() == "strong bot"
    # the choice is remembered: the next bot is strong too unless changed
    assert ann.input_value("#bot-level") == "strong"
    ann.select_option("#bot-level", "easy")
    click_and_wait(ann, "#add-bot")
    ann.wait_for_selector(".seat-row .tag.bot:has-text('easy bot')")

    bob = pages.open(link.replace(pages.base, ""))
    bob.wait_for_selector("#invite-name")
    bob.wait_for_selector("text=(strong bot)")
    join_by_link(bob, "Bob")
    tags = bob.locator(".seat-row .tag.bot")
    tags.first.wait_for()
    assert sorted(tags.all_inner_texts()) == ["easy bot", "strong bot"]
    assert bob.locator("#bot-level").count() == 0, "only the host adds bots"
    shoot(ann, "bot-levels-lobby")

    click_and_wait(ann, "#start")
    ann.wait_for_selector(".tablebox.bigtwo")
    chips = ann.locator(".seat .chip.level")
    chips.first.wait_for()
    assert sorted(chips.all_inner_texts()) == ["easy", "strong"]
    ann.click("[role=tab]:has-text('Log')")
    ann.wait_for_selector(".log .lines li:has-text('(strong bot) sat down.')")
    shoot(ann, "bot-levels-table")
