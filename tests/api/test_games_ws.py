"""Real games over the real socket: the room layer around the real engines."""

from __future__ import annotations

import random
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.games import GAMES
from tests.api.client import cards_in, connect, create, join, play_to_end

pytestmark = pytest.mark.timeout(120)

FAST = {"bot_delay": 0}


def needs(game: str) -> None:
    if game not in GAMES:
        pytest.skip(f"the {game} engine is not registered yet")


def test_big_two_one_person_and_three_bots(client: TestClient) -> None:
    needs("bigtwo")
    t = create(client, "bigtwo", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        assert ann.cmd("start").get("ok")  # the room fills three seats with bots
        view = ann.until_view(lambda v: v["game"] is not None)
        seats = view["room"]["seats"]
        assert [s["bot"] for s in seats] == [False, True, True, True]
        hand = view["game"]["hand"]
        assert len(hand) == 13 and view["game"]["counts"] == [13, 13, 13, 13]
        final = play_to_end(ann, rng=random.Random(7))
        result = final["game"]["result"]
        assert sorted(s for group in result["places"] for s in group) == [0, 1, 2, 3]
        tally = {t["player"]: t["points"] for t in final["room"]["tally"]}
        ids = [s["player"] for s in final["room"]["seats"] if s]
        for place, group in enumerate(result["places"]):
            assert tally[ids[group[0]]] == 3 - place
        # a rematch keeps the seats and adds to the series tally
        assert ann.cmd("rematch").get("ok")
        final2 = play_to_end(ann, rng=random.Random(8))
        tally2 = {t["player"]: t["points"] for t in final2["room"]["tally"]}
        assert sum(tally2.values()) == 2 * (3 + 2 + 1)
        assert [s["player"] for s in final2["room"]["seats"] if s] == ids


def test_big_two_spectator_sees_no_hand(client: TestClient) -> None:
    needs("bigtwo")
    t = create(client, "bigtwo", settings=FAST)
    s = join(client, t["code"], "Sam", spectator=True)
    with (
        connect(client, t["code"], t["token"]) as ann,
        connect(client, t["code"], s["token"]) as sam,
    ):
        ann.recv()
        sam.recv()
        ann.cmd("start")
        first = ann.until_view(lambda v: v["game"] is not None)
        hand = set(first["game"]["hand"])
        play_to_end(ann)
        sam.until_view(lambda v: v["room"]["status"] == "finished")
    played: set[str] = set()
    for f in sam.frames:
        ev: dict[str, Any] = f.get("event") or {}
        if ev.get("type") in ("played", "game_over"):
            played.update(ev.get("cards", []))
            if ev["type"] == "game_over":
                break
        game = (f.get("view") or {}).get("game") or {}
        assert "hand" not in game and f.get("view", {}).get("legal") is None
        # none of Ann's cards shows before it is played
        shown = set(cards_in(game)) | set(cards_in(ev))
        assert not (shown & hand) - played - {"3C"}


def phase(view: dict[str, Any]) -> str | None:
    return (view["game"] or {}).get("phase")


@pytest.fixture
def posso() -> Any:
    """Posso, registered for the test if the lead has not registered it yet."""
    if "posso" in GAMES:
        yield GAMES["posso"]
        return
    try:
        from app.games.posso import POSSO
    except ImportError:
        pytest.skip("the posso engine is not available yet")
    GAMES["posso"] = POSSO
    yield POSSO
    GAMES.pop("posso", None)


def test_posso_called_by_one_player_and_allowed_by_the_next(client: TestClient, posso: Any) -> None:
    slow = {"bot_delay": 0, "posso_window": 15, "posso_answer": 15}
    t = create(client, "posso", options={"cutting": "off", "first_dealer": 0}, settings=slow)
    b = join(client, t["code"], "Bob")
    c = join(client, t["code"], "Cat")
    with (
        connect(client, t["code"], t["token"]) as ann,
        connect(client, t["code"], b["token"]) as bob,
        connect(client, t["code"], c["token"]) as cat,
    ):
        for s in (ann, bob, cat):
            s.recv()
        ann.ok(ann.cmd("start"))
        # the upturn opens a Posso window: Bob (seat 1) is next; Ann (the dealer) and Cat may call
        view = cat.until_view(
            lambda v: v["game"] is not None and v["game"]["phase"] == "posso_window"
        )
        window = view["game"]["posso"]
        assert window["next"] == 1 and sorted(window["eligible"]) == [0, 2]
        upturn = window["card"]
        assert {"type": "call_posso"} in view["legal"]
        before = len(view["game"]["hand"])
        cat.ok(cat.act({"type": "call_posso"}))
        ann.until_view(lambda v: phase(v) == "posso_window" and v["legal"])
        ann.ok(ann.act({"type": "pass_posso"}))
        # the window closes; Bob must answer, and allows
        view = bob.until_view(lambda v: phase(v) == "posso_answer")
        assert view["game"]["posso"]["caller"] == 2
        assert view["legal"] and all(a["type"] == "answer_posso" for a in view["legal"])
        bob.ok(bob.act({"type": "answer_posso", "allow": True}))
        # Cat took the upturned card and the stack top; Bob's turn starts with a draw
        view = bob.until_view(lambda v: phase(v) == "draw")
        assert view["game"]["turn"] == 1 and view["game"]["counts"][2] == before + 2
        assert {a["type"] for a in view["legal"]} == {"draw"}
        cat_view = cat.until_view(
            lambda v: phase(v) == "draw" and v["game"]["counts"][2] == before + 2
        )
        assert upturn in cat_view["game"]["hand"]
        penalty = [e for e in cat.events if e["type"] == "posso_penalty_card"]
        assert len(penalty) == 1 and penalty[0]["card"] in cat_view["game"]["hand"]
        bob.ok(bob.act({"type": "draw", "source": "stack"}))
        for s in (ann, bob):  # the stack card Cat took reached nobody else
            s.until_view(lambda v: phase(v) == "play")
            assert not any(e["type"] == "posso_penalty_card" for e in s.events)
            assert any(e["type"] == "possoed" and e["seat"] == 2 for e in s.events)


def test_posso_reconnect_mid_turn_keeps_the_seat_hand_and_turn(
    client: TestClient, posso: Any
) -> None:
    slow = {"bot_delay": 0, "posso_window": 0, "posso_answer": 15}
    t = create(client, "posso", options={"cutting": "off", "first_dealer": 2}, settings=slow)
    b = join(client, t["code"], "Bob")
    join(client, t["code"], "Cat")
    with connect(client, t["code"], b["token"]) as bob:
        bob.recv()
        with connect(client, t["code"], t["token"]) as ann:
            ann.recv()
            ann.ok(ann.cmd("start"))
            # Cat (seat 2) dealt, so Ann (seat 0) plays first once the upturn's window closes
            view = ann.until_view(lambda v: phase(v) == "draw" and v["legal"])
            ann.ok(ann.act({"type": "draw", "source": "stack"}))
            mid = ann.until_view(lambda v: phase(v) == "play")
            since, inc = ann.v, ann.inc
        # Ann's tab dropped in the middle of her turn, after drawing
        bob.until_view(lambda v: not v["room"]["seats"][0]["connected"])
        with connect(client, t["code"], t["token"], since=since, inc=inc) as ann2:
            back = ann2.until_view(lambda v: True)
            assert back["you"]["seat"] == 0 and back["game"]["turn"] == 0
            assert back["game"]["phase"] == "play"
            assert sorted(back["game"]["hand"]) == sorted(mid["game"]["hand"])
            assert len(back["game"]["hand"]) == len(view["game"]["hand"]) + 1
            discard = next(a for a in back["legal"] if a["type"] == "discard")
            ann2.ok(ann2.act(discard))
