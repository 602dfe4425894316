"""What each seat of a Possum table sees."""

from __future__ import annotations

import json

from app.games.possum import POSSUM
from tests.games.possum.positions import draw, position

COMMON = {"game", "seat", "seats", "phase", "to_act", "turn", "dealer", "counts", "over", "result"}


def test_a_seat_sees_its_hand_the_counts_and_only_the_pile_top() -> None:
    state = position(["2S 4S", "3D 9D 10D", "QH"], pile="4C 5C 6C KC", draw="8H 9H")
    state, _ = draw(state, 0)
    view = POSSUM.view(state, 0)
    assert set(view) >= COMMON
    assert view["hand"] == ["2S", "4S", "8H"] and view["can_play"] is False
    assert view["counts"] == [3, 3, 1]
    assert view["top"] == "KC" and view["pile_count"] == 4 and view["draw_count"] == 1
    assert view["draws_taken"] == 1 and view["draw_limit"] == 2
    assert view["turn"] == 0 and view["to_act"] == [0] and view["phase"] == "play"
    assert view["options"] == {
        "multiply": False,
        "multi": False,
        "no_face_cards": False,
        "single_draw": False,
    }
    text = json.dumps(view)
    for hidden in ("4C", "5C", "6C", "9H", "3D", "9D", "10D", "QH"):
        assert f'"{hidden}"' not in text


def test_a_spectator_sees_no_hand_and_no_can_play() -> None:
    state = POSSUM.new_game(4, {}, 2)
    view = POSSUM.view(state, None)
    assert "hand" not in view and "can_play" not in view and "hands" not in view
    text = json.dumps(view)
    assert all(f'"{c}"' not in text for h in state.hands for c in h)
