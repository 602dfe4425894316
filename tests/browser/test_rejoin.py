"""A friend takes their seat back from a second device mid-game: signed in, by
opening the invite link; as a guest, with a one-time seat link another player
hands out. The first device's seat token stops working."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import Pages, shoot
from tests.browser.play import click_and_wait, create_room, join_by_link

pytestmark = pytest.mark.browser

ACCOUNT = {"name": "bob-rejoin", "password": "correct horse 1"}


POST = """async ([path, body]) => (await fetch(path, {
  method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body),
})).status"""
SEAT = """(code) => JSON.parse(localStorage.getItem(`cardroom:room:${code}`)).seat"""


def post(page: Any, path: str, body: dict[str, Any]) -> int:
    return int(page.evaluate(POST, [path, body]))


def my_seat(page: Any) -> int:
    code = page.url.split("/r/")[1].split("#")[0].split("?")[0].upper()
    return int(page.evaluate(SEAT, code))


def test_a_second_device_takes_the_seat_back_signed_in_and_with_a_seat_link(
    pages: Pages,
) -> None:
    ann = pages.open("/")
    # a short grace: a seat link may be made only once it is over
    link = create_room(ann, "Ann", "possum", settings={"disconnect_grace": "1"})
    path = link.replace(pages.base, "")
    bob = pages.open(path)
    assert post(bob, "/api/accounts/signup", ACCOUNT) in (201, 409)
    assert post(bob, "/api/accounts/signin", ACCOUNT) == 200
    join_by_link(bob, "Bob")
    cy = pages.open(path)
    join_by_link(cy, "Cy")
    ann.wait_for_selector(".seat-row:has-text('Cy') .dot.on")
    click_and_wait(ann, "#start")
    for page in (bob, cy):
        page.wait_for_selector(".tablebox.possum")
    bob.context.close()
    cy.context.close()  # both first devices are gone

    # Bob, signed in on his phone, opens the invite link and gets his own seat
    phone = pages.open("/", phone=True)
    assert post(phone, "/api/accounts/signin", ACCOUNT) == 200
    phone.goto(link)
    phone.fill("#invite-name", "Bob")
    phone.click("button:has-text('Take a seat')")
    phone.wait_for_selector(".tablebox.possum")
    assert my_seat(phone) == 1
    ann.wait_for_selector(".log .lines li:has-text('Bob continues on another device.')")
    shoot(phone, "rejoin-signed-in-phone")

    # Cy is a guest: Ann hands out a seat link for Cy's seat
    ann.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ann.click("[role=tab]:has-text('Seats')")
    # never sooner than 10 s after Cy went, whatever the grace (SEAT_LINK_FLOOR):
    # until then the server refuses, and the page says so
    deadline = time.monotonic() + 30
    while True:
        ann.click(".seat-row[data-seat='2'] button:has-text('Seat link')")
        try:
            ann.wait_for_selector("#toasts :text('Seat link for Cy copied')", timeout=2000)
            break
        except PlaywrightTimeout:
            assert time.monotonic() < deadline, "no seat link 30 s after Cy went"
    seat_link = ann.evaluate("() => navigator.clipboard.readText()")
    assert "#claim=" in seat_link
    laptop = pages.open(seat_link.replace(pages.base, ""))
    laptop.wait_for_selector(".tablebox.possum")
    assert my_seat(laptop) == 2
    assert "claim" not in laptop.url, "the secret leaves the address bar"
    shoot(laptop, "rejoin-seat-link-laptop")
    # the table was told, by name, who made the link and that it was used
    ann.click("[role=tab]:has-text('Log')")
    for line in ("Ann made a link for Cy's seat.", "Cy's seat moved to a new device with Ann's"):
        ann.wait_for_selector(f'.log .lines li:has-text("{line}")')
    # the link worked once: opening it again offers the ordinary join page
    again = pages.open(seat_link.replace(pages.base, ""))
    again.wait_for_selector("#toasts :text('not valid any more')")
    again.wait_for_selector("#invite-name")


def test_continue_on_another_device_with_a_link_and_its_qr_code(pages: Pages) -> None:
    """A person moves their own place: the link and its QR code on the first
    device, opened on the second, which is the same person in the same seat;
    the first device is told plainly that the place moved."""
    ann = pages.open("/")
    link = create_room(ann, "Ann", "possum")
    bob = pages.open(link.replace(pages.base, ""))
    join_by_link(bob, "Bob")
    bob.click("button:has-text('Continue on another device')")  # the lobby shows the seats
    qr = bob.wait_for_selector(".move-box img.qr")
    assert (qr.get_attribute("src") or "").startswith("data:image/svg+xml")
    move = bob.input_value(".move-box input")
    assert "#claim=" in move
    shoot(bob, "move-link-qr")
    phone = pages.open(move.replace(pages.base, ""), phone=True)
    phone.wait_for_selector(".seat-row .tag.you")
    assert my_seat(phone) == 1
    bob.wait_for_selector("text=your seat moved to another device")
