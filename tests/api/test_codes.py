"""Room codes as people type them, normalised once at the boundary, over HTTP
and sockets, in one process and in three sharing one Redis; and a code that
names no room is looked up without writing anything anywhere."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from fastapi.testclient import TestClient
from redis.asyncio import Redis
from starlette.websockets import WebSocketDisconnect

from app.api.identity import GUEST_COOKIE
from app.core.config import Settings
from app.main import create_app
from app.rooms.tokens import new_code
from app.store.records import MemoryRecords
from tests.api.client import connect, create, hello, join
from tests.api.conftest import OPEN_DOORS
from tests.services import require_redis


def typed(code: str) -> str:
    """The code as someone types it off a screen: lower case, in dashed groups."""
    low = code.lower()
    return f"{low[:4]}-{low[4:8]} {low[8:]}"


class Spy(MemoryRecords):
    """Records that count every write, to show a lookup wrote nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    async def claim_room(self, code: str, epoch: int) -> tuple[bool, int] | None:
        self.writes.append(f"claim_room {code}")
        return await super().claim_room(code, epoch)

    async def save_room(self, room: Any, epoch: int = 0) -> None:
        self.writes.append(f"save_room {room.code}")
        await super().save_room(room, epoch)


def _app(**limits: int) -> TestClient:
    return TestClient(create_app(Settings(**{**OPEN_DOORS, **limits}), MemoryRecords()))


def _assert_typed_codes_work(c: TestClient, others: list[TestClient]) -> None:
    t = create(c, "tiny")
    code = typed(t["code"])
    for via in [c, *others]:
        got = via.get(f"/api/rooms/{code}")
        assert got.status_code == 200, got.text
        assert got.json()["room"]["code"] == t["code"]
    last = others[-1] if others else c
    b = join(last, code, "Bob")
    assert b["code"] == t["code"]
    for via in [c, *others]:
        with connect(via, code, b["token"]) as bob:
            view = bob.until_view(lambda v: True)
            assert view["you"]["player"] == b["player"]


def test_codes_work_in_any_case_with_spaces_and_dashes(client: TestClient) -> None:
    _assert_typed_codes_work(client, [])


def test_the_socket_cap_counts_a_seat_however_its_code_is_typed(tiny: None) -> None:
    with _app(max_sockets_per_seat=1) as c:
        t = create(c, "tiny")
        with connect(c, t["code"], t["token"]) as one:
            one.recv()
            with c.websocket_connect(f"/ws/rooms/{typed(t['code'])}") as ws:
                ws.send_json(hello(t["token"]))
                assert ws.receive_json()["error"]["code"] == "too_many_sockets"
                with pytest.raises(WebSocketDisconnect):
                    ws.receive_json()


def test_a_link_for_an_unknown_room_is_answered_as_any_bad_link(client: TestClient) -> None:
    t = create(client, "tiny")
    answers = [
        client.post(f"/api/rooms/{code}/claim", json={"claim": "nope"})
        for code in (t["code"], new_code(), "ZZZZZZ")
    ]
    assert [r.status_code for r in answers] == [400, 400, 400]
    assert answers[0].json() == answers[1].json() == answers[2].json()


def test_claims_and_joins_count_as_lookups(tiny: None) -> None:
    with _app(lookups_per_minute=3) as c:
        t = create(c, "tiny")
        join(c, t["code"], "Bob")
        assert c.post(f"/api/rooms/{t['code']}/claim", json={"claim": "x"}).status_code == 400
        assert c.get(f"/api/rooms/{t['code']}").status_code == 200
        r = c.post(f"/api/rooms/{new_code()}/claim", json={"claim": "x"})
        assert r.status_code == 429 and r.json()["detail"]["code"] == "rate_limited"
        r = c.post(f"/api/rooms/{t['code']}/join", json={"name": "Cy"})
        assert r.status_code == 429


@pytest.fixture
def three(tiny: None) -> Iterator[tuple[list[TestClient], Spy]]:
    """Three apps on one Redis and one store, as three server processes are."""
    settings = Settings(**{**OPEN_DOORS, "redis_url": require_redis(), "lease_seconds": 3})
    records = Spy()
    with ExitStack() as stack:
        clients = [stack.enter_context(TestClient(create_app(settings, records))) for _ in range(3)]
        yield clients, records


def test_typed_codes_work_with_three_processes(three: tuple[list[TestClient], Spy]) -> None:
    clients, _ = three
    _assert_typed_codes_work(clients[0], clients[1:])


def _redis_keys(code: str) -> list[bytes]:
    async def scan() -> list[bytes]:
        r = Redis.from_url(require_redis())
        try:
            return [k async for k in r.scan_iter(match=f"cr:*{code}*")]
        finally:
            await r.aclose()

    return asyncio.run(scan())


def test_an_unknown_code_writes_nothing_anywhere(three: tuple[list[TestClient], Spy]) -> None:
    clients, records = three
    c = clients[0]
    code = new_code()
    before = list(records.writes)
    assert c.get(f"/api/rooms/{typed(code)}").status_code == 404
    assert c.post(f"/api/rooms/{code}/join", json={"name": "Eve"}).status_code == 404
    assert c.post(f"/api/rooms/{code}/claim", json={"claim": "x"}).status_code == 400
    with c.websocket_connect(f"/ws/rooms/{code}") as ws:
        ws.send_json(hello("whatever"))
        assert ws.receive_json()["error"]["code"] == "no_room"
    assert records.writes == before
    assert _redis_keys(code) == []


def _streams(clients: list[TestClient]) -> bytes:
    """Everything the processes' Redis streams hold, as one blob."""
    procs = [c.app.state.rooms.cluster.me for c in clients]  # type: ignore[attr-defined]

    async def read() -> bytes:
        r = Redis.from_url(require_redis())
        try:
            out = b""
            for proc in procs:
                for _id, fields in await r.xrange(f"cr:in:{proc}"):
                    out += b"".join(fields.values())
            return out
        finally:
            await r.aclose()

    return asyncio.run(read())


@pytest.mark.usefixtures("no_link_floor")
def test_redis_streams_carry_no_token_cookie_or_secret(
    three: tuple[list[TestClient], Spy],
) -> None:
    """Joins, claims and links answered by another process go through Redis
    with hashes only: the seat tokens, the guest cookies and the links'
    secrets stay in the processes that made or received them."""
    clients, _ = three
    owner, other, third = clients
    owner.cookies.set(GUEST_COOKIE, "ann-cookie-value")
    t = create(owner, "tiny", settings={"disconnect_grace": 0})
    other.cookies.set(GUEST_COOKIE, "bob-cookie-value")
    b = join(other, typed(t["code"]), "Bob")
    with connect(other, t["code"], t["token"]) as ann:  # relayed to the owner
        ann.recv()
        with connect(other, t["code"], b["token"]) as bob:
            bob.until_view(lambda v: True)
            own = bob.ok(bob.cmd("move_link"))["data"]["claim"]
        ann.until_view(lambda v: not v["room"]["seats"][1]["connected"])
        link = ann.ok(ann.cmd("seat_link", seat=1))["data"]["claim"]
    assert len(link) >= 40 and len(own) >= 40, "the holder put the secrets it made back"
    third.cookies.set(GUEST_COOKIE, "eve-cookie-value")
    r = third.post(f"/api/rooms/{t['code']}/claim", json={"claim": link})
    assert r.status_code == 200, r.text
    blob = _streams(clients)
    assert b'"t":"call"' in blob, "the join and the claim went through the owner's stream"
    secrets = (b["token"], r.json()["token"], link, own, "bob-cookie-value", "eve-cookie-value")
    for secret in secrets:
        assert secret.encode() not in blob, secret
