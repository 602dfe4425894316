"""Every socket gets in however long the game: a friend opens the link of a
2-player Posso game 3,000 changes in and watches it (its story in pages, the
older ones on demand), and a page refreshing in a loop on the same address
never costs a housemate's page its way in.

Before: the spectator's socket was dropped as it joined (its first frame was
more events than a socket may queue) and its page reconnected for ever,
spending the address's room lookups until a friend's refresh was refused.

The server runs in this process (tests/services.py `serving`) so that the
lookups limit can be tight; two sockets here play both seats with random legal
moves until the room is 3,000 changes in.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from app.core.config import Settings
from app.main import create_app
from app.store.records import MemoryRecords
from tests.api.conftest import OPEN_DOORS
from tests.browser.conftest import Pages, shoot
from tests.seeds import TEST_SEED
from tests.services import serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

MOVES = 3_000
LOOKUPS = 40
FAST = {"bot_delay": 0, "posso_window": 0, "posso_answer": 0, "cut": 0}


@pytest.fixture(scope="module")
def tight_server(chromium_path: str) -> Iterator[str]:
    # the two seats here play far faster than any person: no per-socket rate
    tight = {"lookups_per_minute": LOOKUPS, "max_messages_per_second": 10_000}
    settings = Settings(**{**OPEN_DOORS, **tight, "deal_seed": TEST_SEED})
    with serving(create_app(settings, MemoryRecords())) as host:
        yield f"http://{host}"


class Seat:
    """One seat's socket, keeping its latest view."""

    def __init__(self, stack: ExitStack, base: str, code: str, token: str) -> None:
        url = base.replace("http", "ws") + f"/ws/rooms/{code}"
        self.ws: ClientConnection = stack.enter_context(connect(url))
        self.ws.send(json.dumps({"auth": token}))
        self.view: dict[str, Any] | None = None
        self.v = -1
        self.acks: set[Any] = set()

    def pump(self, timeout: float) -> bool:
        try:
            text = self.ws.recv(timeout=timeout)
        except TimeoutError:
            return False
        body = json.loads(text)
        for m in body if isinstance(body, list) else [body]:
            if "view" in m:
                self.view, self.v = m["view"], m["v"]
            if "re" in m:
                self.acks.add(m["re"])
        return True


def play_to(base: str, code: str, tokens: list[str], moves: int, rng: random.Random) -> int:
    """Both seats play random legal moves until the room is `moves` changes in."""
    with ExitStack() as stack:
        seats = [Seat(stack, base, code, t) for t in tokens]
        ids = 0
        while max(s.v for s in seats) < moves:
            for s in seats:
                while s.pump(0.0):
                    pass
            if any(s.view and s.view["room"]["status"] == "finished" for s in seats):
                break
            newest = max(s.v for s in seats)
            ready = [s for s in seats if s.v == newest and s.view and s.view.get("legal")]
            if not ready:
                any(s.pump(0.05) for s in seats)  # a window closing by its timer
                continue
            actor = ready[0]
            assert actor.view is not None
            ids += 1
            actor.ws.send(json.dumps({"id": ids, "action": rng.choice(actor.view["legal"])}))
            while ids not in actor.acks:
                actor.pump(5.0)
        return max(s.v for s in seats)


def test_a_friend_watches_a_long_two_player_posso_game_and_a_refresh_loop_locks_nobody_out(
    browser: Any, tight_server: str
) -> None:
    base = tight_server
    pages = Pages(browser, base)
    try:
        with httpx.Client(base_url=base) as http:
            ann = http.post(
                "/api/rooms", json={"game": "posso", "name": "Ann", "settings": FAST}
            ).json()
            code = ann["code"]
            bob = http.post(f"/api/rooms/{code}/join", json={"name": "Bob"}).json()
            with ExitStack() as stack:
                start = Seat(stack, base, code, ann["token"])
                start.ws.send(json.dumps({"id": 1, "cmd": {"type": "start"}}))
                while 1 not in start.acks:
                    start.pump(5.0)
        reached = play_to(base, code, [ann["token"], bob["token"]], MOVES, random.Random(TEST_SEED))
        assert reached >= MOVES, f"the game ended at v={reached} (seed {TEST_SEED})"

        # a friend opens the link and watches
        cleo = pages.open(f"/r/{code}")
        cleo.fill("#invite-name", "Cleo")
        cleo.click("button:has-text('Watch')")
        cleo.wait_for_function("() => document.body.dataset.room === 'playing'")
        cleo.wait_for_timeout(1500)
        assert cleo.evaluate("() => document.querySelector('#netstatus').hidden"), (
            cleo.text_content("#netstatus")
        )
        lines = cleo.locator(".log li").count()
        assert lines > 0
        if cleo.locator("[data-tab=log]").count():
            cleo.click("[data-tab=log]")
        older = cleo.locator(".log .older")
        older.wait_for()
        older.click()
        cleo.wait_for_function(f"() => document.querySelectorAll('.log li').length > {lines}")
        shoot(cleo, "long-posso-spectator")

        # Ann's page refreshes in a loop, well past the address's lookups
        loop = pages.open(f"/r/{code}")
        loop.evaluate(
            "([code, seat]) => localStorage.setItem('cardroom:room:' + code, JSON.stringify(seat))",
            [code, {"token": ann["token"], "seat": 0, "name": "Ann"}],
        )
        for _ in range(LOOKUPS + 10):
            loop.reload(wait_until="domcontentloaded")
            loop.wait_for_function(
                "() => document.body.dataset.v || /Too many|try again/i.test("
                "document.querySelector('.loading')?.textContent || '')"
            )
        # ...and a housemate's page still gets in, and can look the room up
        dan = pages.open(f"/r/{code}")
        dan.fill("#invite-name", "Dan")
        dan.click("button:has-text('Watch')")
        dan.wait_for_function("() => document.body.dataset.room === 'playing'")
        assert httpx.get(f"{base}/api/rooms/{code}").status_code == 200
        assert not pages.errors, pages.errors
    finally:
        pages.close()
