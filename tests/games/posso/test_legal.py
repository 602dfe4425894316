"""What legal_actions offers in each phase, and that it is accepted."""

from __future__ import annotations

from dataclasses import replace

from app.games.posso import POSSO
from app.games.posso.model import PossoState
from tests.games.posso.helpers import act, close_window, game

H0 = ["3H", "3C", "3D", "5H", "5S", "2C", "9H"]
H1 = ["4H", "4C", "4D", "6H", "6S", "JK", "2S"]
H2 = ["7H", "7C", "7D", "8H", "8S", "8C", "JH"]


def accepted(s: PossoState, seat: int) -> None:
    for a in POSSO.legal_actions(s, seat):
        POSSO.apply(s, seat, a)


def test_each_phase_offers_its_moves_to_those_who_act_and_nothing_to_others() -> None:
    s = POSSO.new_game(3, {"first_dealer": 2}, 4)
    s = replace(s, totals=[0, 0, 25])  # a cut that could lower the dealer's total
    cuts = POSSO.legal_actions(s, 2)
    assert len(cuts) == 6 and all(a["type"] == "cut" and 0 <= a["at"] <= 1 for a in cuts)
    assert abs(cuts[0]["at"] - 21.5 / 108) < 1e-3  # the aim comes first
    assert POSSO.legal_actions(s, 0) == [] and POSSO.legal_actions(s, 1) == []
    accepted(s, 2)
    s = game(3, [H0, H1, H2], "QS", ["4S"])
    assert POSSO.legal_actions(s, 0) == [{"type": "call_posso"}, {"type": "pass_posso"}]
    assert POSSO.legal_actions(s, 1) == []
    s, _ = act(s, 0, type="call_posso")
    s, _ = act(s, 2, type="pass_posso")
    assert POSSO.legal_actions(s, 1) == [
        {"type": "answer_posso", "allow": True},
        {"type": "answer_posso", "allow": False},
    ]
    accepted(s, 1)


def test_turn_moves_list_one_go_down_then_single_card_play_ons_and_swaps() -> None:
    s = close_window(game(3, [H0, H1, H2], "QS", ["4S"]))
    assert POSSO.legal_actions(s, 1) == [
        {"type": "draw", "source": "stack"},
        {"type": "draw", "source": "pile"},
    ]
    s, _ = act(s, 1, type="draw", source="stack")
    moves = POSSO.legal_actions(s, 1)
    assert [a["type"] for a in moves].count("go_down") == 1
    assert [a["card"] for a in moves if a["type"] == "discard"] == [*H1, "4S"]
    accepted(s, 1)
    down = next(a for a in moves if a["type"] == "go_down")
    s, _ = POSSO.apply(s, 1, down)
    plays = [a for a in POSSO.legal_actions(s, 1) if a["type"] == "play_on"]
    assert plays and all(len(a["cards"]) == 1 for a in plays)
    accepted(s, 1)


def test_swaps_and_wild_ends_are_listed_for_runs() -> None:
    other = ["3C", "3D", "4C", "4D", "KC", "KD", "QC", "QD"]
    mine = ["5H", "6H", "7H", "8H", "8S", "9C", "9D", "9S"]
    s = close_window(game(3, [other, mine, other], "KS", ["2C"], hand=2))
    s, _ = act(s, 1, type="draw", source="stack")
    s, _ = act(
        s,
        1,
        type="go_down",
        melds=[
            {"kind": "run", "cards": ["5H", "6H", "2C", "8H"]},
            {"kind": "set", "cards": ["9C", "9D", "9S"]},
        ],
    )
    moves = POSSO.legal_actions(s, 1)
    swaps = [a for a in moves if a["type"] == "swap_wild"]
    assert swaps == [
        {"type": "swap_wild", "meld": "m1", "card": "7H", "to": "low"},
        {"type": "swap_wild", "meld": "m1", "card": "7H", "to": "high"},
    ]
    assert not [a for a in moves if a["type"] == "play_on"]  # 7H and 8S fit nowhere
    accepted(s, 1)
