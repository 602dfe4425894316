"""The room WebSocket end to end (TestClient), against the tiny test game:
whole games, reconnects, spectators, timers, and every kind of bad input."""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.core.config import Settings
from app.main import create_app
from app.store.records import MemoryRecords
from tests.api.client import Sock, cards_in, connect, create, hello, join, play_to_end

pytestmark = pytest.mark.timeout(60)

FAST = {"bot_delay": 0, "posso_window": 15}


def start_with_bots(sock: Sock, bots: int) -> None:
    for _ in range(bots):
        sock.ok(sock.cmd("add_bot"))
    sock.ok(sock.cmd("start"))


def game_log(records: MemoryRecords) -> list[Any]:
    (game,) = records.games.values()
    return game.actions


def test_one_person_and_two_bots_play_a_whole_game(
    client: TestClient, records: MemoryRecords
) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        start_with_bots(ann, 2)
        final = play_to_end(ann)
    game = final["game"]
    assert game["over"] and game["result"]["places"]
    assert final["room"]["status"] == "finished"
    (rec,) = records.games.values()
    assert rec.result == game["result"]
    # the log replays to the same end (recovery is replay)
    from tests.rooms.tinygame import TINY

    state = TINY.new_game(3, rec.options, rec.seed)
    for seat, action in rec.actions:
        state, _ = TINY.apply(state, seat, action)
    assert TINY.result(state) == rec.result


def test_events_come_before_the_view_of_the_same_version(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        start_with_bots(ann, 1)
        play_to_end(ann)
    seen_view: set[int] = set()
    for f in ann.frames:
        if "event" in f:
            assert f["v"] not in seen_view, "an event arrived after its change's view"
        if "view" in f:
            seen_view.add(f["v"])


def test_two_people_see_their_own_hands_only(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    b = join(client, t["code"], "Bob")
    with (
        connect(client, t["code"], t["token"]) as ann,
        connect(client, t["code"], b["token"]) as bob,
    ):
        ann.recv()
        bob.recv()
        ann.ok(ann.cmd("start"))
        va = ann.until_view(lambda v: v["game"] is not None)
        vb = bob.until_view(lambda v: v["game"] is not None)
        assert va["you"]["seat"] == 0 and vb["you"]["seat"] == 1
        assert set(va["game"]["hand"]).isdisjoint(vb["game"]["hand"])
        assert all(c not in cards_in(vb) for c in va["game"]["hand"])
        assert all(c not in cards_in(va) for c in vb["game"]["hand"])
        # sealed bids: Ann's bid value reaches nobody while bidding is open
        ann.ok(ann.act({"type": "bid", "n": 2}))
        ev = bob.until(lambda m: m.get("event", {}).get("type") == "bid")
        assert ev["event"] == {"type": "bid", "seat": 0}
        vb = bob.until_view(lambda v: v["game"]["has_bid"][0])
        assert vb["game"]["bids"] is None


def test_posso_window_timer_runs_out_into_a_timeout(
    client: TestClient, records: MemoryRecords
) -> None:
    t = create(client, "tiny", settings={"bot_delay": 0, "posso_window": 0})
    b = join(client, t["code"], "Bob")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        ann.ok(ann.cmd("start"))
        view = ann.until_view(lambda v: v["game"] is not None and v["game"]["phase"] == "play")
    assert view["game"]["bids"] == [0, 0]
    assert game_log(records) == [(None, {"type": "timeout"})]
    assert b["seat"] == 1


def test_views_show_the_timer_deadline(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        start_with_bots(ann, 1)
        view = ann.until_view(lambda v: v["game"] is not None)
        timer = view["timer"]
        assert timer["kind"] == "posso_window" and timer["deadline_ms"] > 0
        assert 0 < timer["ms_left"] <= 15_000


def test_reconnect_mid_turn_resumes_the_same_seat_and_hand(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST, options={"bidding": False})
    b = join(client, t["code"], "Bob")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        with connect(client, t["code"], b["token"]) as bob:
            bob.recv()
            ann.ok(ann.cmd("start"))
            before = bob.until_view(lambda v: v["game"] is not None)
            last_v, last_inc = bob.v, bob.inc
        # Bob is gone; Ann plays on his missing turn... then Bob returns with `since`
        ann.until_view(lambda v: not v["room"]["seats"][1]["connected"])
        ann.ok(ann.act(ann.view["legal"][0]))
        played = ann.game["pile"][-1]
        with connect(client, t["code"], b["token"], since=last_v, inc=last_inc) as bob2:
            # the missed events come first (his own going away, Ann's card), then a view
            missed = [bob2.recv() for _ in range(2)]
            assert [m["event"] for m in missed] == [
                {"type": "room", "what": "away", "seat": 1, "name": "Bob"},
                {"type": "played", "seat": 0, "card": played},
            ]
            assert [m["v"] for m in missed] == [last_v + 1, last_v + 2]
            view = bob2.until_view(lambda v: True)
            assert view["you"]["seat"] == 1
            assert view["game"]["hand"] == before["game"]["hand"]
            assert view["legal"], "it is Bob's turn and he must be offered his moves"
            bob2.ok(bob2.act(view["legal"][0]))


def test_reconnect_without_history_gets_a_full_view(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        first = ann.recv()
        assert "view" in first
    with connect(client, t["code"], t["token"], since=10_000) as ann:
        first = ann.recv()
        assert "view" in first and first["view"]["you"]["seat"] == 0


def test_spectator_never_sees_a_hand_card(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    s = join(client, t["code"], "Sam", spectator=True)
    assert s["seat"] is None
    with (
        connect(client, t["code"], t["token"]) as ann,
        connect(client, t["code"], s["token"]) as sam,
    ):
        ann.recv()
        sam.recv()
        start_with_bots(ann, 2)
        play_to_end(ann)
        final = sam.until_view(lambda v: v["room"]["status"] == "finished")
    assert final["you"]["seat"] is None and "hand" not in (final["game"] or {})
    public: set[str] = set()
    for f in sam.frames:
        if f.get("event", {}).get("type") == "played":
            public.add(f["event"]["card"])
        body = f.get("view") or f.get("event") or {}
        game = body.get("game") if "view" in f else body
        if isinstance(game, dict) and game.get("over"):
            break  # every hand is shown to all once the game is over
        leaked = set(cards_in(game)) - public
        assert not leaked, f"spectator saw {leaked} in {f}"
        assert "hand" not in (game or {})
        assert f.get("view", {}).get("legal") is None


def test_join_during_a_game_makes_a_spectator(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        start_with_bots(ann, 1)
        late = join(client, t["code"], "Late")
        assert late["seat"] is None


# ------------------------------------------------------------------- bad input


def refused(sock: Sock, raw: str | bytes) -> dict[str, Any]:
    if isinstance(raw, bytes):
        sock.ws.send_bytes(raw)
    else:
        sock.ws.send_text(raw)
    msg = sock.until(lambda m: "error" in m)
    return dict(msg["error"])


@pytest.fixture
def playing(client: TestClient) -> Any:
    t = create(client, "tiny", settings=FAST, options={"bidding": False})
    b = join(client, t["code"], "Bob")
    with (
        connect(client, t["code"], t["token"]) as ann,
        connect(client, t["code"], b["token"]) as bob,
    ):
        ann.recv()
        bob.recv()
        ann.ok(ann.cmd("start"))
        ann.until_view(lambda v: v["game"] is not None)
        bob.until_view(lambda v: v["game"] is not None)
        yield ann, bob


def snapshot(sock: Sock) -> Any:
    view = sock.reply(sock.send(cmd={"type": "resync"})) and sock.view
    assert view is not None
    return view["game"], view["room"]["status"]


def test_bad_frames_get_clear_errors_and_change_nothing(
    playing: tuple[Sock, Sock], records: MemoryRecords
) -> None:
    ann, bob = playing
    before = snapshot(ann)
    cases = {
        "not json {": "bad_json",
        "[1, 2]": "bad_message",
        '{"id": 1}': "unknown_message",
        '{"id": 1, "hello": 2, "action": {"type": "play"}}': "bad_message",
        '{"id": 1, "action": "play"}': "bad_message",
        '{"id": 1, "action": {}, "cmd": {"type": "chat"}}': "bad_message",
        '{"id": {"x": 1}, "cmd": {"type": "resync"}}': "bad_message",
        '{"id": 1, "cmd": {"type": "fly"}}': "unknown_command",
        '{"id": 1, "cmd": {}}': "bad_command",
        '{"id": 1, "action": {"type": "nope"}}': "bad_action",
        '{"id": 1, "action": {"type": "play", "card": "ZZ"}}': "bad_card",
        '{"id": 1, "action": {"type": "timeout"}}': "bad_action",
        '{"id": 1, "action": {"type": "play", "card": "AS", "seat": 1}}': "not_your_seat",
    }
    for raw, code in cases.items():
        err = refused(ann, raw)
        assert err["code"] == code, (raw, err)
        assert err["message"]
    # out of turn: Bob may not play while it is Ann's turn
    assert (
        refused(
            bob,
            orjson.dumps(
                {
                    "id": 5,
                    "action": bob.game["hand"] and {"type": "play", "card": bob.game["hand"][0]},
                }
            ).decode(),
        )["code"]
        == "not_your_turn"
    )
    # oversized frame (the app under test allows 4096 bytes)
    big = orjson.dumps({"id": 9, "cmd": {"type": "chat", "text": "x" * 5000}}).decode()
    assert refused(ann, big)["code"] == "too_large"
    assert refused(ann, ("é" * 2100).encode())["code"] == "too_large"
    assert snapshot(ann) == before
    assert game_log(records) == []
    # ... and the connection still works
    ann.ok(ann.act(ann.view["legal"][0]))
    assert len(game_log(records)) == 1


def test_a_flood_of_oversized_frames_is_cut_off_like_any_flood(client: TestClient) -> None:
    """Each oversized frame is answered, and counts as a strike however slowly
    it comes: a stream of them closes the socket with 4429 after about as many
    answers as the flood limit allows, not one answer per frame for ever."""
    t = create(client, "tiny", settings=FAST)
    big = "x" * 5000  # the app under test allows 4096 bytes
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        answered = 0
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(1000):
                ann.ws.send_text(big)
            while True:
                msg = ann.recv()
                if msg.get("error", {}).get("code") == "too_large":
                    answered += 1
        assert closed.value.code == 4429
        assert 50 <= answered <= 110, answered


def test_a_socket_that_never_authenticates_is_refused(tiny: None) -> None:
    with TestClient(create_app(Settings(auth_timeout=0.2), MemoryRecords())) as c:
        t = create(c, "tiny")
        with c.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
            msg = ws.receive_json()
            assert msg["error"]["code"] == "bad_token" and '{"auth"' in msg["error"]["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4401


def test_a_token_in_the_url_is_not_accepted(client: TestClient) -> None:
    """The token belongs in the first message; one in the address (where logs
    would keep it) authenticates nothing."""
    t = create(client, "tiny")
    with client.websocket_connect(f"/ws/rooms/{t['code']}?token={t['token']}") as ws:
        ws.send_json({"id": 1, "cmd": {"type": "resync"}})
        msg = ws.receive_json()
        assert msg["error"]["code"] == "bad_token" and "view" not in msg
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4401


def test_refusals_name_the_request(playing: tuple[Sock, Sock]) -> None:
    ann, _ = playing
    ann.ws.send_text('{"id": "abc", "cmd": {"type": "fly"}}')
    msg = ann.until(lambda m: "error" in m)
    assert msg["re"] == "abc"
    ann.ws.send_text("garbage")
    msg = ann.until(lambda m: "error" in m)
    assert msg["re"] is None


def test_a_flood_is_rate_limited_then_cut_off(client: TestClient, records: MemoryRecords) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        started = time.monotonic()
        for i in range(60):  # far more than 50 a second, all at once
            ann.ws.send_text(
                orjson.dumps({"id": i, "cmd": {"type": "chat", "text": "spam"}}).decode()
            )
        replies = [ann.until(lambda m: "re" in m) for _ in range(60)]
        elapsed = time.monotonic() - started
        codes = [r["error"]["code"] for r in replies if "error" in r]
        assert "rate_limited" in codes
        # a full bucket of 50, plus what it refilled (50/s) while the burst was read
        assert sum(1 for r in replies if r.get("ok")) <= 50 + int(50 * elapsed) + 1
        # the socket survived the burst: it still answers
        assert "re" in ann.cmd("resync")
        # a sustained flood is cut off with 4429
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(2000):
                ann.ws.send_text('{"id": 1, "cmd": {"type": "resync"}}')
            while True:
                ann.recv()
        assert closed.value.code == 4429


@pytest.mark.parametrize(
    ("path", "first", "code"),
    [
        ("/ws/rooms/{code}", {"auth": "wrong"}, 4401),
        ("/ws/rooms/{code}", {"token": "x"}, 4401),
        ("/ws/rooms/{code}", ["auth"], 4401),
        ("/ws/rooms/{code}", "not json", 4401),
        ("/ws/rooms/NOPE99", {"auth": "x"}, 4404),
    ],
)
def test_bad_token_or_room_is_refused_with_a_reason(
    client: TestClient, path: str, first: Any, code: int
) -> None:
    t = create(client, "tiny", settings=FAST)
    with client.websocket_connect(path.format(code=t["code"])) as ws:
        if isinstance(first, str):
            ws.send_text(first)
        else:
            ws.send_json(first)
        msg = ws.receive_json()
        assert msg["error"]["code"] in ("bad_token", "no_room")
        assert "view" not in msg
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == code
        assert closed.value.reason


# ----------------------------------------------------------------- room life


def test_chat_is_text_for_everyone_and_bounded(client: TestClient) -> None:
    t = create(client, "tiny", name="<b>Ann</b>", settings=FAST)
    b = join(client, t["code"], "Bob")
    with (
        connect(client, t["code"], t["token"]) as ann,
        connect(client, t["code"], b["token"]) as bob,
    ):
        ann.recv()
        bob.recv()
        ann.ok(ann.cmd("chat", text="<script>alert(1)</script>"))
        ev = bob.until(lambda m: m.get("event", {}).get("type") == "chat")
        assert ev["event"] == {
            "type": "chat",
            "seat": 0,
            "name": "<b>Ann</b>",
            "text": "<script>alert(1)</script>",
        }
        assert ann.cmd("chat", text="x" * 501)["error"]["code"] == "bad_command"
        assert ann.cmd("chat", text="   ")["error"]["code"] == "bad_command"
        assert ann.cmd("chat", text="hi\u202eevil")["error"]["code"] == "bad_command"


def test_host_commands_and_refusals(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    b = join(client, t["code"], "Bob")
    with (
        connect(client, t["code"], t["token"]) as ann,
        connect(client, t["code"], b["token"]) as bob,
    ):
        ann.recv()
        bob.recv()
        assert bob.cmd("start")["error"]["code"] == "not_host"
        assert bob.cmd("add_bot")["error"]["code"] == "not_host"
        assert bob.cmd("kick", seat=0)["error"]["code"] == "not_host"
        ann.ok(ann.cmd("add_bot", seat=3))
        assert ann.cmd("add_bot", seat=3)["error"]["code"] == "seat_taken"
        assert ann.cmd("remove_bot", seat=1)["error"]["code"] == "bad_seat"
        assert ann.cmd("add_bot", seat=9)["error"]["code"] == "bad_seat"
        ann.ok(ann.cmd("remove_bot", seat=3))
        bob.ok(bob.cmd("sit", seat=2))
        view = ann.until_view(lambda v: v["room"]["seats"][1] is None)
        assert [s and s["name"] for s in view["room"]["seats"]] == ["Ann", None, "Bob", None]
        assert ann.cmd("set_game", game="chess")["error"]["code"] == "unknown_game"
        assert (
            ann.cmd("set_game", game="tiny", options={"hand": 99})["error"]["code"] == "bad_options"
        )
        assert (
            ann.cmd("set_settings", settings={"posso_window": 99})["error"]["code"]
            == "bad_settings"
        )
        assert ann.cmd("set_settings", settings={"nope": 1})["error"]["code"] == "bad_settings"
        ann.ok(ann.cmd("set_settings", settings={"cut": 20}))
        assert ann.view["room"]["settings"]["cut"] == 20
        ann.ok(ann.cmd("make_host", seat=2))
        assert ann.cmd("start")["error"]["code"] == "not_host"
        bob.ok(bob.cmd("start"))
        assert bob.cmd("sit", seat=3)["error"]["code"] == "not_between_games"
        assert bob.cmd("set_game", game="tiny")["error"]["code"] == "not_between_games"


def test_kick_closes_the_socket_and_voids_the_token(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    b = join(client, t["code"], "Bob")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        with connect(client, t["code"], b["token"]) as bob:
            bob.recv()
            ann.ok(ann.cmd("kick", seat=1))
            with pytest.raises(WebSocketDisconnect) as closed:
                while True:
                    bob.recv()
            assert closed.value.code == 4403
        assert ann.until_view(lambda v: v["room"]["seats"][1] is None)
        with client.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
            ws.send_json(hello(b["token"]))
            assert ws.receive_json()["error"]["code"] == "bad_token"


def test_leaving_mid_game_hands_the_seat_to_a_bot_and_the_host_on(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST, options={"bidding": False})
    b = join(client, t["code"], "Bob")
    with connect(client, t["code"], b["token"]) as bob:
        bob.recv()
        with connect(client, t["code"], t["token"]) as ann:
            ann.recv()
            ann.ok(ann.cmd("start"))
            ann.send(cmd={"type": "leave"})
            with pytest.raises(WebSocketDisconnect) as closed:
                while True:
                    ann.recv()
            assert closed.value.code == 1000
        view = bob.until_view(lambda v: v["you"]["host"])
        assert view["room"]["seats"][0]["bot"] is True
        final = play_to_end(bob)
        assert final["game"]["over"]


def test_last_person_leaving_closes_the_room(client: TestClient, records: MemoryRecords) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        ann.send(cmd={"type": "leave"})
        with pytest.raises(WebSocketDisconnect):
            while True:
                ann.recv()
    assert client.get(f"/api/rooms/{t['code']}").status_code == 404
    assert records.rooms[t["code"]].closed


def test_hand_to_bot_after_grace_and_take_back_by_reconnecting(client: TestClient) -> None:
    settings = {**FAST, "disconnect_grace": 0, "auto_bot": False}
    t = create(client, "tiny", settings=settings, options={"bidding": False})
    b = join(client, t["code"], "Bob")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        ann.ok(ann.cmd("start"))
        assert ann.cmd("hand_to_bot", seat=0)["error"]["code"] == "bad_seat"  # connected
        assert ann.view["room"]["seats"][1]["grace_ends_ms"] is not None
        ann.ok(ann.act(ann.view["legal"][0]))  # now Bob (absent) must play
        ann.ok(ann.cmd("hand_to_bot", seat=1))
        # the bot plays Bob's turn, so Ann is to act again
        view = ann.until_view(lambda v: v["legal"] is not None)
        assert view["room"]["seats"][1]["auto"] is True
        with connect(client, t["code"], b["token"]) as bob:
            bob.recv()
            view = ann.until_view(lambda v: v["room"]["seats"][1]["connected"])
            assert view["room"]["seats"][1]["auto"] is False


def test_an_away_seat_goes_to_a_bot_at_once_long_before_the_grace_ends(
    client: TestClient,
) -> None:
    """A leaver costs nobody a minute: any player hands the seat over at once."""
    t = create(client, "tiny", settings={**FAST, "disconnect_grace": 600})
    join(client, t["code"], "Bob")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        ann.ok(ann.cmd("start"))
        ann.ok(ann.cmd("hand_to_bot", seat=1))
        view = ann.until_view(lambda v: v["room"]["seats"][1]["auto"])
        assert view["room"]["seats"][1]["grace_ends_ms"] is not None, "still within the grace"


def test_rematch_keeps_the_seats(client: TestClient, records: MemoryRecords) -> None:
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        start_with_bots(ann, 2)
        assert ann.cmd("rematch")["error"]["code"] == "not_finished"
        first = play_to_end(ann)
        seats = [s["player"] for s in first["room"]["seats"] if s]
        ann.ok(ann.cmd("rematch"))
        view = ann.until_view(lambda v: v["room"]["status"] == "playing")
        assert [s["player"] for s in view["room"]["seats"]] == seats
        assert view["room"]["games_played"] == 2
    assert len(records.games) == 2


def test_two_tabs_of_one_seat_both_get_views(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST)
    with (
        connect(client, t["code"], t["token"]) as tab1,
        connect(client, t["code"], t["token"]) as tab2,
    ):
        tab1.recv()
        tab2.recv()
        tab1.ok(tab1.cmd("chat", text="hi"))
        assert tab2.until(lambda m: "event" in m)["event"]["text"] == "hi"


def test_batched_sockets_get_a_change_and_its_ack_in_one_frame(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST, options={"bidding": False})
    with connect(client, t["code"], t["token"], batch=True) as ann:
        ann.recv()
        ann.ok(ann.cmd("add_bot"))
        ann.ok(ann.cmd("start"))
        before = len(ann.raw_frames)
        ann.ok(ann.act(ann.view["legal"][0]))  # type: ignore[index]
        frame = ann.raw_frames[before]
        assert isinstance(frame, list)
        # the move's events, its view and its ack together, in that order (a bot's
        # answer may ride along in the same frame, after them)
        mine = [m for m in frame if m["v"] == frame[0]["v"]]
        kinds = ["event" if "event" in m else "view" if "view" in m else "re" for m in mine]
        assert kinds[-2:] == ["view", "re"] and set(kinds[:-2]) == {"event"}
        assert [m["v"] for m in frame] == sorted(m["v"] for m in frame)
        final = play_to_end(ann)
        assert final["game"]["over"]


def test_batched_views_leave_out_a_room_part_the_socket_already_has(client: TestClient) -> None:
    """During a game the room part is most of a view and rarely changes: a
    batching socket gets it on connecting, when it changes, and on a resync;
    a plain socket (here a second tab of the same seat) gets it every time."""
    t = create(client, "tiny", settings=FAST, options={"bidding": False})
    with connect(client, t["code"], t["token"], batch=True) as ann:
        first = ann.until(lambda m: "view" in m)
        assert "room" in first["view"]
        ann.ok(ann.cmd("add_bot"))
        with connect(client, t["code"], t["token"]) as tab:
            tab.until(lambda m: "view" in m)
            ann.ok(ann.cmd("start"))
            start = len(ann.frames)
            final = play_to_end(ann)
            assert final["room"]["status"] == "finished"  # merged by the client
            views = [m["view"] for m in ann.frames[start:] if "view" in m]
            during = [v for v in views if not v["game"]["over"]]
            assert len(during) >= 3 and all("room" not in v for v in during)
            assert "room" in views[-1] and views[-1]["room"]["status"] == "finished"
            tab.until(lambda m: "view" in m and m["view"]["game"]["over"])
            assert all("room" in m["view"] for m in tab.frames if "view" in m)
        before = len(ann.frames)
        ann.ok(ann.cmd("resync"))
        [whole] = [m["view"] for m in ann.frames[before:] if "view" in m]
        assert "room" in whole


def test_a_reader_that_fails_ends_its_socket_and_says_why(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever ends a socket's reader is logged: a failure nobody expected
    (here the room's handler raising what it never should) is not a socket
    that closes with nothing said anywhere."""
    from app.rooms.room import Room

    async def broken(self: Room, *args: Any) -> None:
        raise ValueError("a failure nobody expected")

    t = create(client, "tiny")
    caplog.set_level(logging.ERROR, logger="app.api.ws")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        monkeypatch.setattr(Room, "handle", broken)
        ann.ws.send_json({"id": 1, "cmd": {"type": "chat", "text": "hi"}})
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(10):
                ann.ws.receive_json()
        assert closed.value.code == 1011  # the tab reconnects
    failed = [r for r in caplog.records if "reader failed" in r.getMessage()]
    assert len(failed) == 1 and failed[0].exc_info is not None
    assert "a failure nobody expected" in str(failed[0].exc_info[1])
