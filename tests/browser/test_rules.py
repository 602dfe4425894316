"""Rules at hand: each game has a how-to-play page in the app, in plain words
with cards pictured, linked from the lobby and (in the Seats tab) the table,
opening beside the room so the game is not left."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room

pytestmark = pytest.mark.browser

GAMES = {"posso": "Posso", "possession": "Possession", "possum": "Possum", "bigtwo": "Big Two"}


def test_every_game_has_a_rules_page_with_pictured_examples(pages: Pages) -> None:
    page = pages.open("/#rules")
    links = page.eval_on_selector_all(".rules li a", "els => els.map(e => e.textContent)")
    assert links == list(GAMES.values())
    for game, title in GAMES.items():
        page.goto(f"{pages.base}/#rules/{game}")
        page.wait_for_selector(f"h1:has-text('How to play {title}')")
        assert page.locator(".rules section h2").count() >= 3
        assert page.locator(".rule-example .card").count() >= 2
        shoot(page, f"rules-{game}")


def test_the_lobby_and_the_table_link_to_the_rules_in_a_new_tab(pages: Pages) -> None:
    page = pages.open("/", phone=True)
    create_room(page, "Ann", "bigtwo")
    link = page.locator(".lobbypanel a.rules-link")
    assert link.get_attribute("href") == "/#rules/bigtwo"
    assert link.get_attribute("target") == "_blank"
    page.click("#start")
    page.wait_for_selector(".felt.game-bigtwo .hand .card")
    page.click(".tabs [data-tab=players]")
    with page.context.expect_page() as opened:
        page.click(".tabbody a.rules-link")
    rules = opened.value
    rules.wait_for_selector("h1:has-text('How to play Big Two')")
    assert page.locator(".felt.game-bigtwo").count() == 1  # the room stayed open
