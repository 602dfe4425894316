"""No writes from other sites (app/api/origins.py), over a real server.

The server runs as `make run` runs it (its own uvicorn process, SQLite
migrated by Alembic) with PUBLIC_URL set.  Each state-changing route family
is asked as a hostile page's browser would ask it - a foreign Origin, a
`Sec-Fetch-Site` of another site, an opaque origin - and refused with
`cross_site`, leaving nothing changed; the card room's own pages (their
origin, PUBLIC_URL's, the proxy's https one) and clients that send neither
header are served.  A socket from another site is refused at the handshake.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from app.api.origins import origin_of
from tests.integration.server import LoggedServer

PUBLIC = "https://cards.example.org"
FOREIGN = "https://evil.example"

#: one request per state-changing route family (the bodies do not matter to
#: a refusal; ROOM stands for an open room's code)
WRITES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/api/rooms", {"game": "bigtwo", "name": "Eve"}),
    ("POST", "/api/rooms/ROOM/join", {"name": "Eve"}),
    ("POST", "/api/rooms/ROOM/claim", {"claim": "x" * 40}),
    ("POST", "/api/accounts/signup", {"name": "Eve", "password": "hunter22!"}),
    ("POST", "/api/accounts/signin", {"name": "Ann", "password": "hunter22!"}),
    ("POST", "/api/accounts/signout", None),
    ("PUT", "/api/me/push", {"endpoint": "https://fcm.googleapis.com/x", "keys": {}}),
    ("DELETE", "/api/me/push", {"endpoint": "https://fcm.googleapis.com/x"}),
    ("POST", "/api/qr", {"text": "http://127.0.0.1/r/ABC"}),
    ("POST", "/api/replay", {"format": "cardroom-game"}),
]

#: what a hostile page's browser sends
HOSTILE: list[dict[str, str]] = [
    {"Origin": FOREIGN},
    {"Origin": FOREIGN, "Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site", "Origin": "https://other.example.org"},
    {"Origin": "null"},
    {"Origin": "http://127.0.0.1.evil.example"},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoggedServer]:
    # one address plays every part: lift the per-address limits
    limits = {"ROOMS_PER_HOUR": "1000", "JOINS_PER_MINUTE": "1000"}
    limits |= {"LOOKUPS_PER_MINUTE": "1000", "SIGNINS_PER_MINUTE": "1000"}
    s = LoggedServer(tmp_path_factory.mktemp("origins"), env={"PUBLIC_URL": PUBLIC, **limits})
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def room(server: LoggedServer) -> dict[str, Any]:
    """An open room, its host signed up as Ann."""
    host = httpx.Client(base_url=server.base)
    made = host.post("/api/rooms", json={"game": "bigtwo", "name": "Ann"})
    assert made.status_code == 200, made.text
    signed = host.post("/api/accounts/signup", json={"name": "Ann", "password": "hunter22!"})
    assert signed.status_code == 201, signed.text
    return {**made.json(), "client": host}


def _send(
    client: httpx.Client, method: str, path: str, body: Any, headers: dict[str, str], code: str
) -> httpx.Response:
    return client.request(method, path.replace("ROOM", code), json=body, headers=headers)


def _refused(got: httpx.Response) -> bool:
    return got.status_code == 403 and got.json()["detail"]["code"] == "cross_site"


def _named(headers: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in headers.items())


@pytest.mark.parametrize("headers", HOSTILE, ids=_named)
def test_every_write_from_another_site_is_refused_and_changes_nothing(
    server: LoggedServer, room: dict[str, Any], headers: dict[str, str]
) -> None:
    host: httpx.Client = room["client"]
    code = room["code"]
    before = host.get(f"/api/rooms/{code}").json()
    with httpx.Client(base_url=server.base) as eve:
        eve.get("/api/me")
        guest = eve.cookies["cardroom_guest"]
        for method, path, body in WRITES:
            got = _send(eve, method, path, body, headers, code)
            assert _refused(got), (method, path, got.status_code, got.text)
            assert got.json()["detail"]["message"]
            assert "set-cookie" not in got.headers, (method, path)
            # the host's signed-in browser, as a hostile page would use it
            got = _send(host, method, path, body, headers, code)
            assert _refused(got), (method, path, got.status_code, got.text)
        assert eve.cookies["cardroom_guest"] == guest
    assert host.get(f"/api/rooms/{code}").json() == before  # nobody joined
    assert host.get("/api/me").json()["signed_in"] is True  # not signed out
    # no account was made in Eve's name
    eve = {"name": "Eve", "password": "hunter22!"}
    assert httpx.post(f"{server.base}/api/accounts/signin", json=eve).status_code == 401


def test_the_card_rooms_own_pages_and_plain_clients_may_write(server: LoggedServer) -> None:
    own = {"Origin": server.base, "Sec-Fetch-Site": "same-origin"}
    allowed: list[dict[str, str]] = [
        {},  # a script or the command line: neither header
        own,
        {"Origin": server.base.upper().replace("HTTP://", "http://")},  # host case
        {"Origin": PUBLIC},  # where invite links point
        {"Origin": PUBLIC + ":443"},  # the same origin, its port spelled out
        # behind the proxy: the browser's origin is https, and so is the request
        {"Origin": f"https://127.0.0.1:{server.port}", "X-Forwarded-Proto": "https"},
        {"Sec-Fetch-Site": "none"},  # typed by the user
    ]
    for headers in allowed:
        with httpx.Client(base_url=server.base) as c:
            made = c.post("/api/rooms", json={"game": "bigtwo", "name": "Ann"}, headers=headers)
            assert made.status_code == 200, (headers, made.text)
            code = made.json()["code"]
            joined = c.post(f"/api/rooms/{code}/join", json={"name": "Bob"}, headers=headers)
            assert joined.status_code == 200, (headers, joined.text)
            assert c.post("/api/qr", json={"text": server.base}, headers=headers).status_code == 200
    # and every route family of the refusals above is served from the own
    # origin (its answer is the route's own, not the middleware's)
    with httpx.Client(base_url=server.base) as c:
        code = c.post("/api/rooms", json={"game": "bigtwo", "name": "Ann"}).json()["code"]
        for method, path, body in WRITES:
            got = _send(c, method, path, body, own, code)
            assert got.status_code != 405 and not _refused(got), (method, path, got.text)
            assert got.status_code < 300 or isinstance(got.json()["detail"], (dict, list)), (
                method, path, got.text,
            )  # fmt: skip
    # an https origin without the proxy saying the request came over https is
    # another origin (the scheme counts)
    got = httpx.post(
        f"{server.base}/api/rooms",
        json={"game": "bigtwo", "name": "Ann"},
        headers={"Origin": f"https://127.0.0.1:{server.port}"},
    )
    assert _refused(got)
    # reads are left alone: they change nothing
    assert httpx.get(f"{server.base}/api/me", headers={"Origin": FOREIGN}).status_code == 200


def test_a_guest_who_signs_out_keeps_their_identity(server: LoggedServer) -> None:
    with httpx.Client(base_url=server.base) as c:
        made = c.post("/api/rooms", json={"game": "bigtwo", "name": "Ann"})
        assert made.status_code == 200
        guest = c.cookies["cardroom_guest"]
        person = c.get("/api/me/person").json()["person"]
        out = c.post("/api/accounts/signout", headers={"Origin": server.base})
        assert out.status_code == 200 and out.json() == {"signed_in": False}
        assert "cardroom_guest" not in out.headers.get("set-cookie", "")
        assert c.cookies["cardroom_guest"] == guest
        assert c.get("/api/me/person").json()["person"] == person
        # a signed-in browser does become a new guest (the next person at a
        # shared computer does not inherit the account's games)
        c.post("/api/accounts/signup", json={"name": "Guestly", "password": "hunter22!"})
        c.post("/api/accounts/signout")
        assert c.cookies["cardroom_guest"] != guest
        assert c.get("/api/me").json()["signed_in"] is False


def _first_view(ws: Any) -> dict[str, Any]:
    for _ in range(10):
        msg = json.loads(ws.recv(timeout=10))
        if "view" in msg:
            return dict(msg["view"])
    raise AssertionError("no view")


def test_a_socket_from_another_site_is_refused_at_the_handshake(
    server: LoggedServer, room: dict[str, Any]
) -> None:
    url = f"ws://127.0.0.1:{server.port}/ws/rooms/{room['code']}"
    for origin in (FOREIGN, "null", f"https://127.0.0.1:{server.port}"):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, origin=origin, open_timeout=10)  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403, origin
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers={"Sec-Fetch-Site": "cross-site"}, open_timeout=10)
    assert refused.value.response.status_code == 403
    for origin in (server.base, PUBLIC, None):
        with connect(url, origin=origin, open_timeout=10) as ws:  # type: ignore[arg-type]
            ws.send(json.dumps({"auth": room["token"]}))
            assert _first_view(ws)["room"]["code"] == room["code"], origin


def test_origins_are_compared_as_browsers_write_them() -> None:
    same = [
        ("https://Cards.Example.org", "https://cards.example.org:443/any/path"),
        ("http://127.0.0.1:8000", "HTTP://127.0.0.1:8000/"),
        ("http://[::1]:8000", "http://[::1]:8000"),
    ]
    for one, two in same:
        assert origin_of(one) == origin_of(two) is not None, (one, two)
    for bad in ("null", "file:///etc", "http://x:notaport", "http://", "", "ws://host"):
        assert origin_of(bad) is None, bad
    assert origin_of("https://host:8443") != origin_of("https://host")
    assert origin_of("http://host") != origin_of("https://host")
