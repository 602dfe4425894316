"""Say what moves: "Continue on another device" says plainly that the new
device becomes the person (place, games, records, alerts) and this browser
stops being them; afterwards the old browser says where its person went - on
the room's page and on My games - instead of "No games yet" or "a room you
were not in"."""

from __future__ import annotations

from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room, join_by_link


def test_the_old_browser_is_told_what_moved_and_where(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "possum")
    code = link.rsplit("/", 1)[1]
    bob = pages.open(link.replace(pages.base, ""))
    join_by_link(bob, "Bob")
    bob.click("button:has-text('Continue on another device')")
    what = bob.wait_for_selector(".move-box .move-what").inner_text()
    assert "becomes you" in what and "past games" in what and "turn alerts" in what, what
    assert "stops being you" in what, what
    move = bob.input_value(".move-box input")
    phone = pages.open(move.replace(pages.base, ""), phone=True)
    phone.wait_for_selector(".seat-row .tag.you")
    # the old browser: where its person went, in plain words
    bob.wait_for_selector("text=You continue on another device now")
    shoot(bob, "moved-old-browser")
    bob.goto(pages.base + "/#history")
    note = bob.wait_for_selector(".history .moved-note").inner_text()
    assert f"room {code}" in note and "another device" in note, note
    # the new device's My games does not say so: nothing moved away from it
    phone.goto(pages.base + "/#history")
    phone.wait_for_selector(".history h1")
    assert phone.locator(".moved-note").count() == 0
