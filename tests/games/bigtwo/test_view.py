"""What each seat of a Big Two table sees."""

from __future__ import annotations

import json

from app.games.bigtwo import BIGTWO
from tests.games.bigtwo.positions import pass_, play, position

COMMON = {"game", "seat", "seats", "phase", "to_act", "turn", "dealer", "counts", "over", "result"}


def test_a_seat_sees_its_hand_the_counts_and_the_trick() -> None:
    state = position(["9C 10C", "4S 2S", "3H 4H 5H", "5D 6D"], turn=0, trick=("8C", 3))
    state, _ = play(state, 0, "9C")
    state = pass_(state, 1)
    view = BIGTWO.view(state, 2)
    assert set(view) >= COMMON
    assert view["hand"] == ["3H", "4H", "5H"]
    assert view["counts"] == [1, 2, 3, 2]
    assert view["trick"] == {"cards": ["9C"], "seat": 0, "category": "single", "size": 1}
    assert view["passed"] == [1] and view["places"] == []
    assert view["turn"] == 2 and view["to_act"] == [2] and not view["control"]
    assert view["phase"] == "play" and view["over"] is False and "hands" not in view
    json.dumps(view)  # JSON-ready


def test_a_spectator_sees_no_hand() -> None:
    state = BIGTWO.new_game(4, {}, 3)
    view = BIGTWO.view(state, None)
    assert "hand" not in view and view["seat"] is None
    text = json.dumps(view)
    # 3C is named as the card the opening lead must hold: public by the rules
    assert all(f'"{c}"' not in text for h in state.hands for c in h if c != "3C")


def test_no_seat_sees_another_hand() -> None:
    state = BIGTWO.new_game(4, {}, 3)
    for seat in range(4):
        text = json.dumps(BIGTWO.view(state, seat))
        for other in range(4):
            if other != seat:
                assert all(f'"{c}"' not in text for c in state.hands[other] if c != "3C")
