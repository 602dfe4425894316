"""The app factory: static client, invite links, optional routers, recovery at startup."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import STATIC_DIR, create_app
from app.store.records import MemoryRecords
from tests.api.client import connect, create


def test_client_and_invite_links_serve_index(client: TestClient) -> None:
    if not (STATIC_DIR / "index.html").is_file():
        return
    index = (STATIC_DIR / "index.html").read_bytes()
    assert client.get("/").content == index
    assert client.get("/r/ABC234").content == index
    assert client.get("/api/health").json() == {"status": "ok"}  # not shadowed by the mount


def test_a_restarted_app_recovers_rooms_from_its_records(tiny: None) -> None:
    records = MemoryRecords()
    settings = Settings()
    with TestClient(create_app(settings, records)) as c:
        t = create(c, "tiny", settings={"bot_delay": 0, "posso_window": 15})
        with connect(c, t["code"], t["token"]) as ann:
            ann.recv()
            ann.ok(ann.cmd("add_bot"))
            ann.ok(ann.cmd("start"))
            hand = ann.game["hand"]
            ann.ok(ann.act({"type": "bid", "n": 1}))
    # a new process over the same records: same room, same seat, same hand
    with (
        TestClient(create_app(settings, records)) as c2,
        connect(c2, t["code"], t["token"], since=3) as ann2,
    ):
        view = ann2.until_view(lambda v: True)
        assert view["you"]["seat"] == 0
        assert view["game"]["hand"] == hand and view["game"]["my_bid"] == 1
        assert view["room"]["status"] == "playing"
