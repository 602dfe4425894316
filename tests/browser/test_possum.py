"""Two people in two browsers (a laptop and a phone) open and join a room,
seat a bot, and play Possum to the end through the page alone. Also: a page
refreshed mid-game comes back to the same seat and the same hand."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import (
    click_and_wait,
    create_room,
    game_over,
    hand_labels,
    join_by_link,
    my_turn,
    take_possum_turn,
    wait_until,
)

pytestmark = pytest.mark.browser


def test_two_browsers_play_possum_against_a_bot_to_the_end(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "possum")
    bob = pages.open(link.replace(pages.base, ""), phone=True)
    join_by_link(bob, "Bob")

    # The host sees Bob arrive, connected, and seats a bot.
    ann.wait_for_selector(".seat-row:has-text('Bob') .dot.on")
    # Chat is plain text: markup typed by a player stays text.
    bob.fill("#chat-input", "<img src=x onerror=alert(1)> hi <b>all</b>")
    bob.press("#chat-input", "Enter")
    line = ann.locator(".chat .lines li").last
    line.wait_for()
    assert line.inner_text() == "Bob: <img src=x onerror=alert(1)> hi <b>all</b>"
    assert ann.locator(".chat .lines img, .chat .lines b").count() == 0
    click_and_wait(ann, "#add-bot")
    ann.wait_for_selector(".seat-row .tag.bot")
    shoot(ann, "lobby-laptop")
    shoot(bob, "lobby-phone")
    click_and_wait(ann, "#start")
    for page in (ann, bob):
        page.wait_for_selector(".tablebox.possum")
        assert len(hand_labels(page)) == 6

    shot = False
    for _ in range(400):
        if game_over(ann) and game_over(bob):
            break
        moved = False
        for page in (ann, bob):
            if not game_over(page) and my_turn(page):
                if not shot:
                    shoot(ann, "possum-laptop")
                    shoot(bob, "possum-phone")
                    shot = True
                take_possum_turn(page)
                moved = True
        if not moved:
            ann.wait_for_timeout(50)
    for page in (ann, bob):
        wait_until(lambda p=page: game_over(p), 20, "the game to end")
        page.wait_for_selector(".result")
        # Places of all three seats are listed, and everyone's hand is shown.
        assert page.locator(".result .places li").count() >= 2
        assert page.locator(".shown .shown-row").count() == 3
    shoot(ann, "possum-over-laptop")
    shoot(bob, "possum-over-phone")
    # The log told the story.
    assert ann.locator(".log .lines li").count() > 5


def test_refresh_mid_game_returns_to_the_same_hand(pages: Pages) -> None:
    ann = pages.open("/")
    create_room(ann, "Ann", "possum", bots=2)
    ann.wait_for_selector(".seat-row .tag.bot >> nth=1")
    click_and_wait(ann, "#start")
    ann.wait_for_selector(".tablebox.possum")
    wait_until(lambda: my_turn(ann), 20, "Ann's turn")
    take_possum_turn(ann)  # the game is under way
    wait_until(lambda: my_turn(ann) or game_over(ann), 20, "Ann's next turn")
    before = sorted(hand_labels(ann))
    top = ann.get_attribute(".possumtop .card", "data-code")
    log_lines = ann.locator(".log .lines li").count()
    assert before

    # A lost connection: the page says so, and comes back by itself.
    ann.context.set_offline(True)
    ann.wait_for_selector("#netstatus:has-text('offline')")
    ann.context.set_offline(False)
    ann.wait_for_selector("#netstatus", state="hidden")
    assert sorted(hand_labels(ann)) == before

    ann.reload()
    ann.wait_for_selector(".tablebox.possum")
    # Same seat (her name on her own area), same cards, same top card, and
    # the log survived the refresh.
    assert ann.locator(".mearea .seat-name").inner_text() == "Ann"
    assert sorted(hand_labels(ann)) == before
    assert ann.get_attribute(".possumtop .card", "data-code") == top
    assert ann.locator(".log .lines li").count() >= log_lines
    shoot(ann, "possum-after-refresh-laptop")
