"""What each seat sees: its own hand and public facts, never a hidden card."""

from __future__ import annotations

import random

from app.games.posso import POSSO
from tests.games.posso.checks import no_leak, pick
from tests.games.posso.helpers import act, close_window, game

H0 = ["3H", "3C", "3D", "5H", "5S", "2C", "9H"]
H1 = ["4H", "4C", "4D", "6H", "6S", "JK", "2S"]
H2 = ["7H", "7C", "7D", "8H", "8S", "8C", "JH"]
H3 = ["9C", "9D", "10C", "10D", "JC", "JD", "QC"]


def test_a_seat_sees_its_hand_and_only_counts_of_others() -> None:
    s = game(3, [H0, H1, H2], "QS", ["4S"])
    v = POSSO.view(s, 1)
    assert v["hand"] == H1 and v["counts"] == [7, 7, 7] and v["seat"] == 1
    assert v["pile_top"] == "QS" and v["pile_size"] == 1 and v["stack_count"] == 108 - 22
    assert v["hand_no"] == 1 and v["requirement"]["text"] == "two threes of a kind"
    assert v["dealer"] == 0 and v["turn"] == 1 and v["timer"] == "posso_window"
    hidden = set(H0 + H2) - set(H1) - {"QS"}
    text = str({k: val for k, val in v.items() if k != "hand"})
    assert not any(f"'{c}'" in text for c in hidden)
    spectator = POSSO.view(s, None)
    assert "hand" not in spectator and spectator["counts"] == [7, 7, 7]


def test_posso_window_state_is_public_as_it_happens() -> None:
    s = game(4, [H0, H1, H2, H3], "QS")
    v = POSSO.view(s, 2)
    assert v["posso"] == {
        "next": 1,
        "card": "QS",
        "eligible": [0, 2, 3],
        "waiting": [0, 2, 3],
        "callers": [],
        "passed": [],
        "caller": None,
        "helps": False,  # no queen in seat 2's hand (only in its own view)
    }
    assert "helps" not in POSSO.view(s, None)["posso"]
    assert v["to_act"] == [0, 2, 3] and v["phase"] == "posso_window"
    s, _ = act(s, 3, type="call_posso")
    s, _ = act(s, 0, type="pass_posso")
    v = POSSO.view(s, 1)
    assert v["posso"]["callers"] == [3] and v["posso"]["passed"] == [0]
    assert v["posso"]["waiting"] == [2]
    s, _ = act(s, 2, type="pass_posso")
    v = POSSO.view(s, None)
    assert v["phase"] == "posso_answer" and v["posso"]["caller"] == 3 and v["to_act"] == [1]
    assert v["posso"]["waiting"] == [] and v["timer"] == "posso_answer"


def test_melds_show_ids_owners_and_who_is_down() -> None:
    s = close_window(game(3, [H0, H1, H2], "QS", ["4S"]))
    s, _ = act(s, 1, type="draw", source="stack")
    melds = [
        {"kind": "set", "cards": ["4H", "4C", "4D"]},
        {"kind": "set", "cards": ["6H", "6S", "JK"]},
    ]
    s, _ = act(s, 1, type="go_down", melds=melds)
    v = POSSO.view(s, 0)
    assert [(m["id"], m["owner"], m["kind"], m["rank"]) for m in v["melds"]] == [
        ("m1", 1, "set", "4"),
        ("m2", 1, "set", "6"),
    ]
    assert v["down"] == [False, True, False] and v["counts"] == [7, 2, 7]
    assert v["phase"] == "play" and v["turn"] == 1


def test_leak_invariance_at_every_step_of_random_games() -> None:
    """Re-deal every card a seat cannot see: its view must not change."""
    for seats, seed in [(2, 1), (4, 2), (7, 3)]:
        rng = random.Random(seed)
        s = POSSO.new_game(seats, {"start_hand": 9, "decks": 3}, seed)
        checked = 0
        for _ in range(400):
            no_leak(s, rng)  # asserts the invariance for every seat and the spectator
            checked += 1
            if POSSO.is_over(s):
                break
            acting = sorted(POSSO.to_act(s))
            if not acting:  # a moot cut: only its timeout is awaited
                s, _ = POSSO.apply(s, None, {"type": "timeout"})
                continue
            seat = rng.choice(acting)
            s, _ = POSSO.apply(s, seat, pick(rng, POSSO.legal_actions(s, seat)))
        assert checked >= 100, f"only {checked} positions checked with {seats} seats"
