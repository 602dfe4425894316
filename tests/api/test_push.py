"""Turn nudges over Web Push, end to end: real rooms playing Big Two on the
real app (SQLite), a push service on the loopback, and the browser's side
made in the test, which decrypts every message it is sent."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.core import metrics
from app.core.config import Settings
from app.db.models import PushKey, PushSubscription
from app.main import create_app
from app.rooms.nudges import Nudge
from app.rooms.webpush import QUEUE_MAX, Nudges
from tests.api.client import Sock, cards_in, connect, create, join
from tests.api.conftest import OPEN_DOORS
from tests.api.push_service import Browser, PushService, push_service
from tests.db.backends import migrate

pytestmark = pytest.mark.timeout(120)

#: nobody's seat goes to a bot while they are away: every turn waits for them
SETTINGS = {"bot_delay": 0, "auto_bot": False, "disconnect_grace": 3600}


@pytest.fixture
def service() -> Iterator[PushService]:
    with push_service() as s:
        yield s


@contextlib.contextmanager
def push_app(tmp_path: Path, **settings: Any) -> Iterator[TestClient]:
    """The app on a migrated SQLite file, pushing to the loopback at once."""
    url = f"sqlite+aiosqlite:///{tmp_path}/cardroom.db"
    asyncio.run(migrate(url))
    loopback = {"push_after": 0, "push_services": "127.0.0.1", "push_plain_http": True}
    merged: dict[str, Any] = {**OPEN_DOORS, **loopback, **settings}
    with TestClient(create_app(Settings(**merged, database_url=url))) as c:
        yield c


@pytest.fixture
def app_client(tmp_path: Path, service: PushService) -> Iterator[TestClient]:
    with push_app(tmp_path) as c:
        yield c


@contextlib.contextmanager
def as_(c: TestClient, jar: dict[str, str]) -> Iterator[TestClient]:
    """Run requests with one person's cookies (each person their own browser)."""
    c.cookies.clear()
    for k, v in jar.items():
        c.cookies.set(k, v)
    yield c
    jar.clear()
    jar.update({cookie.name: cookie.value or "" for cookie in c.cookies.jar})


def subscribe(c: TestClient, jar: dict[str, str], browser: Browser, endpoint: str) -> None:
    with as_(c, jar):
        r = c.put("/api/me/push", json=browser.subscription(endpoint))
    assert r.status_code == 200, r.text


def to_act(sock: Sock) -> list[int]:
    game = (sock.view or {}).get("game") or {}
    return list(game.get("to_act") or [])


def wait_turn(ann: Sock, seats: set[int]) -> dict[str, Any]:
    return ann.until_view(
        lambda v: v["room"]["status"] != "playing" or bool(set(v["game"]["to_act"]) & seats)
    )


def bob_plays(c: TestClient, ann: Sock, code: str, token: str, rng: random.Random) -> None:
    with connect(c, code, token) as bob:
        view = bob.until_view(lambda v: bool(v.get("legal")))
        bob.ok(bob.act(rng.choice(view["legal"])))
    # Ann's socket sees the turn move on before anyone looks for the next one
    ann.until_view(lambda v: v["room"]["status"] != "playing" or 1 not in v["game"]["to_act"])


def quiet(seconds: float = 0.4) -> None:
    """Long enough for a nudge that should not come (push_after is 0) to come."""
    time.sleep(seconds)


def start_big_two(c: TestClient) -> Any:
    """Ann's Big Two room and Bob in it: their tickets, and their cookie jars."""
    ann_jar: dict[str, str] = {}
    bob_jar: dict[str, str] = {}
    with as_(c, ann_jar):
        t = create(c, "bigtwo", "Ann", settings=SETTINGS)
    with as_(c, bob_jar):
        b = join(c, t["code"], "Bob")
    assert b["seat"] == 1
    return t, b, ann_jar, bob_jar


def bobs_turns(
    c: TestClient, t: dict[str, Any], b: dict[str, Any], n: int, rng: random.Random
) -> Iterator[tuple[Sock, int]]:
    """Start the game and play Ann's turns at once; at each of Bob's first `n`
    turns yield (Ann's socket, which turn), then play Bob's move."""
    with connect(c, t["code"], t["token"]) as ann:
        ann.recv()
        ann.ok(ann.cmd("start"))
        turn = 0
        while turn < n:
            view = wait_turn(ann, {0, 1})
            assert view["room"]["status"] == "playing", "the game ended before Bob's turns"
            if 0 in view["game"]["to_act"]:
                ann.ok(ann.act(rng.choice(view["legal"])))
                continue
            turn += 1
            yield ann, turn
            bob_plays(c, ann, t["code"], b["token"], rng)


def test_one_encrypted_nudge_per_turn_to_the_person_away_and_none_with_a_card(
    app_client: TestClient, service: PushService
) -> None:
    c = app_client
    t, b, ann_jar, bob_jar = start_big_two(c)
    code = t["code"]
    bob_phone, ann_phone = Browser(), Browser()
    subscribe(c, bob_jar, bob_phone, f"{service.base}/bob")
    subscribe(c, ann_jar, ann_phone, f"{service.base}/ann")
    hands: list[set[str]] = []
    for ann, turn in bobs_turns(c, t, b, 3, random.Random(5)):
        got = service.wait_for("/bob", turn)
        assert len(got) == turn, "one nudge when Bob's turn came"
        # the turn goes on: chat, and Bob opening the room and leaving it
        # again, change the room but start no new turn
        ann.ok(ann.cmd("chat", text="your go, Bob"))
        with connect(c, code, b["token"]) as bob:
            seen = bob.until_view(lambda v: v["game"] is not None)
            hands.append(set(seen["game"]["hand"]))
        quiet()
        assert len(service.to("/bob")) == turn, "a second nudge in one turn"
    assert service.to("/ann") == [], "Ann was at the table: no nudge"
    pushes = service.to("/bob")
    assert len(pushes) == 3
    for push, hand in zip(pushes, hands, strict=True):
        assert push.headers["TTL"] and push.headers["Authorization"].startswith("vapid t=")
        assert push.body and b"Your turn" not in push.body, "the body travels encrypted"
        message = bob_phone.decrypt(push)
        assert message == {
            "title": "Card room",
            "body": "Your turn in Big Two at Ann's table",
            "url": f"/r/{code}",
            "tag": f"turn:{code}",
        }
        assert cards_in(message) == [] and len(hand) > 0


def test_a_gone_subscription_is_dropped_and_a_busy_service_is_tried_again(
    app_client: TestClient, service: PushService
) -> None:
    c = app_client
    t, b, _ann_jar, bob_jar = start_big_two(c)
    old, new = Browser(), Browser()
    subscribe(c, bob_jar, old, f"{service.base}/gone")
    subscribe(c, bob_jar, new, f"{service.base}/busy")
    service.answers = {"/gone": [410], "/busy": [503, 429]}
    before = {o: pushed(o) for o in ("sent", "gone", "failed")}
    for _ann, turn in bobs_turns(c, t, b, 2, random.Random(2)):
        if turn == 1:
            # refused twice, then taken: three tries of the same message
            busy = service.wait_for("/busy", 3)
            assert new.decrypt(busy[2])["body"] == "Your turn in Big Two at Ann's table"
            assert len(service.to("/gone")) == 1
        else:
            service.wait_for("/busy", 4)
            quiet()
            assert len(service.to("/gone")) == 1, "a gone subscription is not tried again"
    maker = c.app.state.db_sessionmaker  # type: ignore[attr-defined]

    async def endpoints() -> list[str]:
        async with maker() as s:
            return list(await s.scalars(select(PushSubscription.endpoint)))

    assert asyncio.run(endpoints()) == [f"{service.base}/busy"]
    # the metrics say the same (app/core/metrics.py): two taken, one gone, none failed
    after = {o: pushed(o) - before[o] for o in before}
    assert after == {"sent": 2, "gone": 1, "failed": 0}


def pushed(outcome: str) -> float:
    return metrics.REGISTRY.get_sample_value("cardroom_push_total", {"outcome": outcome}) or 0.0


def test_subscriptions_are_checked_and_the_key_pair_is_made_once(
    app_client: TestClient, tmp_path: Path
) -> None:
    c = app_client
    key = c.get("/api/push").json()["public_key"]
    assert len(key) == 87  # 65 bytes, base64url
    phone = Browser()
    bad = phone.subscription("http://10.0.0.1/steal")
    r = c.put("/api/me/push", json=bad)
    assert r.status_code == 422 and r.json()["detail"]["code"] == "bad_endpoint"
    broken = phone.subscription("http://127.0.0.1:9/x")
    broken["keys"]["p256dh"] = broken["keys"]["p256dh"][:20]
    assert c.put("/api/me/push", json=broken).status_code == 422
    # someone else's subscription is not theirs to drop
    mine = phone.subscription("http://127.0.0.1:9/mine")
    assert c.put("/api/me/push", json=mine).status_code == 200
    c.cookies.clear()
    r = c.request("DELETE", "/api/me/push", json={"endpoint": mine["endpoint"]})
    assert r.json() == {"removed": False}
    # a second server on the same database signs with the same key
    url = str(c.app.state.settings.database_url)  # type: ignore[attr-defined]
    with TestClient(create_app(Settings(**OPEN_DOORS, database_url=url))) as other:
        assert other.get("/api/push").json()["public_key"] == key
        maker = other.app.state.db_sessionmaker  # type: ignore[attr-defined]

        async def keys() -> int:
            async with maker() as s:
                return int(await s.scalar(select(func.count()).select_from(PushKey)) or 0)

        assert asyncio.run(keys()) == 1


async def test_a_full_queue_drops_the_nudge_not_the_move() -> None:
    class NoStore:
        async def of(self, guest_id: str | None, account_id: int | None) -> list[Any]:
            return []

        async def drop(self, subscription_id: int) -> None:
            return None

    from app.db.push import new_keys

    nudges = Nudges(NoStore(), new_keys().private_pem, contact="mailto:a@b.example", after=0)
    for _ in range(QUEUE_MAX + 3):
        nudges.send(Nudge("ROOM", "g", None, "Your turn in Tiny"))  # never waits
    assert nudges.counts["queued"] == QUEUE_MAX and nudges.counts["dropped"] == 3


def test_a_person_who_leaves_in_their_turn_is_nudged_then_and_one_here_is_not(
    app_client: TestClient, service: PushService
) -> None:
    c = app_client
    t, b, _ann_jar, bob_jar = start_big_two(c)
    phone = Browser()
    subscribe(c, bob_jar, phone, f"{service.base}/bob")
    rng = random.Random(9)
    with connect(c, t["code"], t["token"]) as ann:
        ann.recv()
        with connect(c, t["code"], b["token"]) as bob:
            bob.recv()
            ann.ok(ann.cmd("start"))
            while True:
                view = wait_turn(ann, {0, 1})
                assert view["room"]["status"] == "playing"
                if 1 in view["game"]["to_act"]:
                    break
                ann.ok(ann.act(rng.choice(view["legal"])))
            quiet()
            assert service.to("/bob") == [], "Bob is at the table"
        # his tab closed in the middle of his turn: told now, once
        service.wait_for("/bob", 1)
        quiet()
        assert len(service.to("/bob")) == 1
        bob_plays(c, ann, t["code"], b["token"], rng)
    assert phone.decrypt(service.to("/bob")[0])["body"] == "Your turn in Big Two at Ann's table"


def test_subscribing_counts_against_the_address_s_lookups(tmp_path: Path) -> None:
    with push_app(tmp_path, lookups_per_minute=2) as c:
        sub = Browser().subscription("http://127.0.0.1:9/x")
        assert [c.put("/api/me/push", json=sub).status_code for _ in range(3)] == [200, 200, 429]


def test_a_server_without_a_database_sends_no_push(client: TestClient) -> None:
    r = client.get("/api/push")
    assert r.status_code == 503 and r.json()["detail"]["code"] == "no_push"
