"""The fixed tables: requirements per hand and card points."""

from __future__ import annotations

from app.games.posso.rules import REQUIREMENTS, hand_points, is_wild, points


def test_ten_hands_deal_six_plus_k_with_their_requirements() -> None:
    shapes = {k: sorted(r.melds) for k, r in REQUIREMENTS.items()}
    assert shapes == {
        1: [("set", 3), ("set", 3)],
        2: [("run", 4), ("set", 3)],
        3: [("set", 4), ("set", 4)],
        4: [("run", 5), ("set", 4)],
        5: [("run", 5), ("run", 5)],
        6: [("run", 8), ("set", 3)],
        7: [("set", 4), ("set", 4), ("set", 4)],
        8: [("run", 5), ("set", 4), ("set", 4)],
        9: [("run", 5), ("run", 5), ("set", 4)],
        10: [("run", 5), ("run", 5), ("run", 5)],
    }
    assert [r.deal for r in REQUIREMENTS.values()] == list(range(7, 17))
    assert [k for k, r in REQUIREMENTS.items() if r.distinct_suits] == [5, 9, 10]
    assert [k for k, r in REQUIREMENTS.items() if r.all_cards] == [10]


def test_card_points() -> None:
    assert [points(c) for c in ["3H", "7S", "8D", "KC", "AS", "2H", "JK"]] == [
        5,
        5,
        10,
        10,
        15,
        20,
        0,
    ]
    assert hand_points(["10H", "JD", "QS", "4C", "AD", "2C", "JK"]) == 70
    assert is_wild("2D") and is_wild("JK") and not is_wild("AS") and not is_wild("10C")
