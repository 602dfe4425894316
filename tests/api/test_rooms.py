"""HTTP: opening, joining and looking at rooms; the games and settings lists."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.api.identity import GUEST_COOKIE, guest_key
from app.core.config import Settings
from app.main import create_app
from app.rooms.tokens import CODE_ALPHABET, CODE_LENGTH
from app.store.records import MemoryRecords
from tests.api.client import create, join


def test_create_answers_code_token_and_seat(client: TestClient, records: MemoryRecords) -> None:
    r = client.post("/api/rooms", json={"game": "tiny", "options": {"hand": 4}, "name": " Ann  "})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"code", "token", "seat", "player"}
    assert body["seat"] == 0 and len(body["token"]) >= 40 and len(body["code"]) == CODE_LENGTH
    assert set(body["code"]) <= set(CODE_ALPHABET)
    saved = records.rooms[body["code"]]
    (ann,) = saved.players
    assert ann.name == "Ann" and ann.token_hash and body["token"] not in repr(saved)
    cookie = client.cookies.get(GUEST_COOKIE)
    assert cookie and ann.guest_id == guest_key(cookie), "stored as the cookie's hash only"
    assert saved.host_player_id == ann.player_id
    assert saved.options == {"hand": 4, "bidding": True}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"game": "chess", "name": "A"}, 400, "unknown_game"),
        ({"game": "tiny", "name": "A", "options": {"hand": 0}}, 400, "bad_options"),
        ({"game": "tiny", "name": "A", "options": {"colour": "red"}}, 400, "bad_options"),
        ({"game": "tiny", "name": "A", "settings": {"posso_window": 16}}, 400, "bad_settings"),
        ({"game": "tiny", "name": "A", "settings": {"bot_delay": "soon"}}, 400, "bad_settings"),
        ({"game": "tiny", "name": "   "}, 400, "bad_name"),
        ({"game": "tiny", "name": "x" * 25}, 400, "bad_name"),
        ({"game": "tiny", "name": "a\u0000b"}, 400, "bad_name"),
    ],
)
def test_create_refuses_bad_requests_clearly(
    client: TestClient, records: MemoryRecords, body: dict[str, object], status: int, code: str
) -> None:
    r = client.post("/api/rooms", json=body)
    assert r.status_code == status, r.text
    assert r.json()["detail"]["code"] == code
    assert r.json()["detail"]["message"]
    assert records.rooms == {}


def test_create_with_a_malformed_body_is_422(client: TestClient) -> None:
    assert client.post("/api/rooms", json={"name": "A"}).status_code == 422
    assert client.post("/api/rooms", json={"game": "tiny", "name": "A", "x": 1}).status_code == 422


def test_join_fills_seats_then_makes_spectators(client: TestClient) -> None:
    t = create(client, "tiny")
    code = t["code"].lower()
    typed = f" {code[:4]} {code[4:8]}-{code[8:]} "  # as read aloud, in groups
    seats = [join(client, typed if i == 0 else code, f"P{i}")["seat"] for i in range(4)]
    assert seats == [1, 2, 3, None]  # four seats in all; the fifth person watches
    assert join(client, t["code"], "Sam", spectator=True)["seat"] is None
    room = client.get(f"/api/rooms/{t['code']}").json()["room"]
    assert [s["name"] for s in room["seats"]] == ["Ann", "P0", "P1", "P2"]
    assert room["status"] == "lobby" and "token" not in str(room)


def test_join_an_unknown_room_is_404(client: TestClient) -> None:
    r = client.post("/api/rooms/ZZZZZZ/join", json={"name": "Bob"})
    assert r.status_code == 404 and r.json()["detail"]["code"] == "no_room"
    assert client.get("/api/rooms/ZZZZZZ").status_code == 404


def test_a_room_holds_a_bounded_crowd(client: TestClient) -> None:
    t = create(client, "tiny")
    codes = [
        client.post(f"/api/rooms/{t['code']}/join", json={"name": f"S{i}", "spectator": True})
        for i in range(60)
    ]
    assert codes[-1].status_code == 409 and codes[-1].json()["detail"]["code"] == "room_full"


def test_games_list_carries_option_schemas(client: TestClient) -> None:
    games = {g["name"]: g for g in client.get("/api/games").json()}
    tiny = games["tiny"]
    assert tiny["min_seats"] == 2 and tiny["max_seats"] == 4 and tiny["title"] == "Tiny"
    assert set(tiny["options_schema"]["properties"]) == {"hand", "bidding"}
    assert tiny["options_defaults"] == {"hand": 3, "bidding": True}


def test_room_settings_schema_and_defaults(client: TestClient) -> None:
    body = client.get("/api/room-settings").json()
    assert body["defaults"]["posso_window"] == 8 and body["defaults"]["turn_timer"] is None
    assert body["schema"]["properties"]["posso_window"]["maximum"] == 15


def test_health_answers_and_the_api_map_is_hidden_by_default(client: TestClient) -> None:
    assert client.get("/api/health").json() == {"status": "ok", "public_url": None}
    assert client.get("/docs").status_code == 404
    assert client.get("/openapi.json").status_code == 404
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    assert "/api/rooms" in paths and "/api/rooms/{code}/join" in paths


def test_the_api_map_is_served_when_the_setting_asks_for_it(
    tiny: None, records: MemoryRecords
) -> None:
    with TestClient(create_app(Settings(api_docs=True), records)) as c:
        assert c.get("/docs").status_code == 200
        paths = c.get("/openapi.json").json()["paths"]
        assert "/api/rooms" in paths and "/api/rooms/{code}/join" in paths


def test_health_names_the_public_url_invite_links_use(tiny: None, records: MemoryRecords) -> None:
    settings = Settings(public_url="https://cards.example.org/")
    with TestClient(create_app(settings, records)) as c:
        assert c.get("/api/health").json()["public_url"] == "https://cards.example.org"


@pytest.mark.parametrize("url", ["cards.example.org", "ftp://cards.example.org", "http://a b"])
def test_a_public_url_that_is_no_web_address_is_refused_at_start(url: str) -> None:
    with pytest.raises(ValueError, match="public_url"):
        Settings(public_url=url)
