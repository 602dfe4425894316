"""A whole game through the real browser client against a real server whose
log is read afterwards: the seat token never reaches it (the client sends it
in the socket's first message, not in the URL uvicorn logs), and the client
runs under the server's Content-Security-Policy without a single violation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import Pages
from tests.browser.play import create_room, game_over, my_turn, take_bigtwo_turn, wait_until
from tests.integration import server as serving
from tests.integration.server import LoggedServer

pytestmark = pytest.mark.browser

logged_server = serving.logged_server


@pytest.fixture
def logged_pages(browser: Any, logged_server: LoggedServer) -> Iterator[Pages]:
    p = Pages(browser, logged_server.base)
    try:
        yield p
        assert not p.errors, f"JavaScript errors on the page: {p.errors}"
    finally:
        p.close()


def test_a_whole_browser_game_leaves_no_token_in_the_server_log(
    logged_server: LoggedServer, logged_pages: Pages
) -> None:
    ann = logged_pages.open("/")
    console: list[str] = []
    ann.on("console", lambda m: console.append(m.text))
    ann.reload()  # the listener sees the page from its first line
    create_room(ann, "Ann", "bigtwo", bots=3)
    ann.wait_for_selector("#start:not([disabled])")
    ann.click("#start")
    ann.wait_for_selector(".tablebox.bigtwo")
    moves = 0
    while not game_over(ann):
        if my_turn(ann):
            take_bigtwo_turn(ann)
            moves += 1
        else:
            ann.wait_for_timeout(30)
        assert moves < 200
    wait_until(lambda: game_over(ann), what="the game to end")
    seats = ann.evaluate(
        """() => Object.keys(localStorage).filter((k) => k.startsWith("cardroom:room:"))
            .map((k) => JSON.parse(localStorage.getItem(k)))"""
    )
    tokens = [s["token"] for s in seats]
    code = ann.url.rsplit("/r/", 1)[1]
    log = logged_server.stop()
    assert tokens and all(len(t) >= 40 for t in tokens)
    assert f'"WebSocket /ws/rooms/{code}" [accepted]' in log, log[-2000:]
    assert moves >= 1
    assert not [t for t in tokens if t in log], "a seat token is in the server log"
    assert not re.search(r"token=", log)
    blocked = [m for m in console if "Content Security Policy" in m]
    assert not blocked, blocked
