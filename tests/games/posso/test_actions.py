"""A player's own turn, from stacked decks: drawing, going down, playing on,
swapping wilds, discarding and going out -- each accepted move and each refusal."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.posso import POSSO
from app.games.posso.model import PossoState
from tests.games.posso.helpers import act, close_window, game, public, refused, types

H0 = ["3H", "3C", "3D", "5H", "5S", "2C", "9H"]
H1 = ["4H", "4C", "4D", "6H", "6S", "JK", "2S"]
H2 = ["7H", "7C", "7D", "8H", "8S", "8C", "JH"]


@pytest.fixture
def hand1() -> PossoState:
    """Hand 1, dealer 0: seat 1 is to draw; the stack's top is 4S then 10D."""
    return close_window(game(3, [H0, H1, H2], "QS", ["4S", "10D", "KC"]))


def sets(*melds: list[str]) -> dict[str, Any]:
    return {"type": "go_down", "melds": [{"kind": "set", "cards": m} for m in melds]}


def test_draw_from_stack_shows_the_card_to_the_drawer_only(hand1: PossoState) -> None:
    s, ev = act(hand1, 1, type="draw", source="stack")
    assert s.hands[1][-1] == "4S" and s.phase == "play" and len(s.stack) == len(hand1.stack) - 1
    assert public(ev, "drew") == {"type": "drew", "to": None, "seat": 1, "source": "stack"}
    private = [e for e in ev if e["to"] is not None]
    assert private == [{"type": "drew_card", "to": 1, "card": "4S"}]


def test_draw_from_pile_takes_the_upturn(hand1: PossoState) -> None:
    s, ev = act(hand1, 1, type="draw", source="pile")
    assert s.hands[1][-1] == "QS" and s.pile == []
    assert public(ev, "drew")["card"] == "QS"


def test_turn_order_refusals(hand1: PossoState) -> None:
    assert refused(hand1, 0, type="draw", source="stack") == "not_your_turn"
    assert refused(hand1, 2, type="discard", card="7H") == "not_your_turn"
    assert refused(hand1, 1, type="discard", card="4H") == "must_draw_first"
    assert refused(hand1, 1, **sets(["4H", "4C", "4D"], ["6H", "6S", "JK"])) == "must_draw_first"
    assert refused(hand1, 1, type="draw", source="table") == "bad_action"
    assert refused(hand1, None, type="draw", source="stack") == "not_your_turn"
    assert refused(hand1, 7, type="draw", source="stack") == "bad_seat"
    s, _ = act(hand1, 1, type="draw", source="stack")
    assert refused(s, 1, type="draw", source="stack") == "already_drew"
    assert refused(s, 0, type="discard", card="3H") == "not_your_turn"


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"type": "discard"}, "bad_action"),
        ({"type": "discard", "card": "4H", "extra": 1}, "bad_action"),
        ({"type": "discard", "card": "1H"}, "bad_card"),
        ({"type": "discard", "card": 4}, "bad_card"),
        ({"type": "discard", "card": "AS"}, "not_in_hand"),
        ({"type": "fold"}, "unknown_action"),
        ({"type": "go_down", "melds": "4H 4C 4D"}, "bad_action"),
        ({"type": "go_down", "melds": [{"kind": "pair", "cards": ["4H", "4C"]}]}, "bad_action"),
        ({"type": "go_down", "melds": [{"kind": "set", "cards": []}]}, "bad_cards"),
        ({"type": "play_on", "meld": "m1", "cards": ["4S"]}, "not_down"),
        ({"type": "swap_wild", "meld": "m1", "card": "4S", "to": "low"}, "not_down"),
        ({"type": "timeout"}, "room_only"),
    ],
)
def test_malformed_and_impossible_moves(
    hand1: PossoState, action: dict[str, Any], code: str
) -> None:
    s, _ = act(hand1, 1, type="draw", source="stack")
    assert refused(s, 1, **action) == code


def test_going_down_lays_the_requirement(hand1: PossoState) -> None:
    s, _ = act(hand1, 1, type="draw", source="stack")
    s, ev = act(s, 1, **sets(["4H", "4C", "4D"], ["6H", "6S", "JK"]))
    assert s.down == [False, True, False]
    assert sorted(s.hands[1]) == ["2S", "4S"]
    laid = public(ev, "went_down")["melds"]
    assert [m["id"] for m in laid] == ["m1", "m2"]
    assert laid[1] == {
        "id": "m2",
        "owner": 1,
        "kind": "set",
        "cards": ["6H", "6S", "JK"],
        "rank": "6",
    }
    assert refused(s, 1, **sets(["4S", "2S", "4H"], ["6H", "6S", "JK"])) == "already_down"


@pytest.mark.parametrize(
    ("melds", "code"),
    [
        ((["4H", "4C", "4D"], ["6H", "JK", "2S"]), "too_many_wilds"),
        ((["4H", "4C", "4D", "4S"], ["6H", "6S", "JK"]), "wrong_melds"),
        ((["4H", "4C", "4D"],), "wrong_melds"),
        ((["4H", "4C", "6H"], ["4D", "6S", "JK"]), "bad_set"),
        ((["4H", "4C", "4D"], ["6H", "6S", "6C"]), "not_in_hand"),
        ((["JK", "2S", "4D"], ["4H", "4C", "4S"]), "too_many_wilds"),
    ],
)
def test_bad_go_downs(hand1: PossoState, melds: tuple[list[str], ...], code: str) -> None:
    s, _ = act(hand1, 1, type="draw", source="stack")
    assert refused(s, 1, **sets(*melds)) == code


def test_a_run_is_not_a_set_in_hand_one(hand1: PossoState) -> None:
    s, _ = act(hand1, 1, type="draw", source="stack")
    bad = {
        "type": "go_down",
        "melds": [
            {"kind": "set", "cards": ["4H", "4C", "4D"]},
            {"kind": "run", "cards": ["4S", "JK", "6S"]},
        ],
    }
    assert refused(s, 1, **bad) == "wrong_melds"


def test_play_on_own_and_others_sets_then_go_out_by_playing(hand1: PossoState) -> None:
    s, _ = act(hand1, 1, type="draw", source="stack")
    s, _ = act(s, 1, **sets(["4H", "4C", "4D"], ["6H", "6S", "JK"]))
    assert refused(s, 1, type="play_on", meld="m2", cards=["4S"]) == "does_not_fit"
    assert refused(s, 1, type="play_on", meld="m9", cards=["4S"]) == "no_such_meld"
    assert refused(s, 1, type="play_on", meld="m1", cards=["4S"], end="low") == "bad_action"
    assert refused(s, 1, type="swap_wild", meld="m2", card="6C", to="low") == "not_in_hand"
    s, ev = act(s, 1, type="play_on", meld="m1", cards=["4S"])
    assert s.melds[0].cards == ("4H", "4C", "4D", "4S")
    assert public(ev, "played_on")["meld"]["cards"] == ["4H", "4C", "4D", "4S"]
    s, ev = act(s, 1, type="play_on", meld="m2", cards=["2S"])
    assert "went_out" in types(ev) and "hand_ended" in types(ev)
    row = public(ev, "hand_ended")["row"]
    assert row["went_out"] == 1
    # 3H 3C 3D 5H 5S = 25, 2C = 20, 9H = 10; 7H 7C 7D = 15, 8H 8S 8C JH = 40
    assert row["points"] == [55, 0, 55]
    assert s.hand_no == 2 and s.dealer == 1


def test_going_out_by_discarding(hand1: PossoState) -> None:
    s, _ = act(hand1, 1, type="draw", source="stack")
    s, _ = act(s, 1, **sets(["4H", "4C", "4D"], ["6H", "6S", "JK"]))
    s, _ = act(s, 1, type="play_on", meld="m1", cards=["4S"])
    s, ev = act(s, 1, type="discard", card="2S")
    assert types(ev)[:3] == ["discarded", "went_out", "hand_ended"]
    assert s.totals == [55, 0, 55]


def test_discard_passes_the_turn_and_opens_a_window(hand1: PossoState) -> None:
    s, _ = act(hand1, 1, type="draw", source="stack")
    s, ev = act(s, 1, type="discard", card="6S")
    assert s.pile[-1] == "6S" and s.hands[1].count("6S") == 0
    opened = public(ev, "posso_opened")
    assert opened["next"] == 2 and opened["eligible"] == [0] and opened["card"] == "6S"


# ---- runs (hand 2: a three of a kind and a run of four) ------------------------------

R1 = ["5H", "6H", "7H", "8H", "8S", "9C", "9D", "9S"]


@pytest.fixture
def hand2() -> PossoState:
    """Seat 1 holds a run and a set; stack top: 2C, then 4H, 9H, 10H, JH."""
    other = [
        ["3C", "3D", "4C", "4D", "KC", "KD", "QC", "QD"],
        ["3S", "4S", "5S", "6S", "JC", "JD", "AC", "AD"],
    ]
    s = game(3, [other[0], R1, other[1]], "KS", ["2C", "4H", "9H", "10H", "JH"], hand=2)
    s = close_window(s)
    s, _ = act(s, 1, type="draw", source="stack")
    return s


def lay(run: list[str], group: list[str]) -> dict[str, Any]:
    return {
        "type": "go_down",
        "melds": [{"kind": "run", "cards": run}, {"kind": "set", "cards": group}],
    }


@pytest.mark.parametrize(
    ("run", "code"),
    [
        (["5H", "6H", "7H", "8S"], "run_mixed_suits"),
        (["5H", "7H", "8H", "2C"], "bad_run"),
        (["8H", "7H", "6H", "5H"], "bad_run"),
        (["5H", "6H", "7H", "8H", "2C"], "wrong_melds"),
    ],
)
def test_bad_runs(hand2: PossoState, run: list[str], code: str) -> None:
    assert refused(hand2, 1, **lay(run, ["9C", "9D", "9S"])) == code


def test_runs_grow_at_either_end(hand2: PossoState) -> None:
    s, ev = act(hand2, 1, **lay(["5H", "6H", "7H", "8H"], ["9C", "9D", "9S"]))
    run = public(ev, "went_down")["melds"][0]
    assert run["low"] == "5" and run["high"] == "8" and run["suit"] == "H" and not run["full"]
    low, ev = act(s, 1, type="play_on", meld="m1", cards=["2C"], end="low")
    assert low.melds[0].cards == ("2C", "5H", "6H", "7H", "8H") and low.melds[0].low == 4
    assert public(ev, "played_on")["end"] == "low"
    high, ev = act(s, 1, type="play_on", meld="m1", cards=["2C"])  # a lone wild: high end
    assert high.melds[0].cards == ("5H", "6H", "7H", "8H", "2C")
    assert public(ev, "played_on")["end"] == "high"
    assert refused(s, 1, type="play_on", meld="m1", cards=["8S"]) == "does_not_fit"
    assert refused(s, 1, type="play_on", meld="m2", cards=["8S"]) == "does_not_fit"


def test_run_play_on_checks_the_standing_of_each_card(hand2: PossoState) -> None:
    s, _ = act(hand2, 1, **lay(["5H", "6H", "2C", "8H"], ["9C", "9D", "9S"]))
    assert refused(s, 1, type="play_on", meld="m1", cards=["7H"], end="high") == "does_not_fit"
    assert refused(s, 1, type="play_on", meld="m1", cards=["7H"]) == "does_not_fit"
    assert refused(s, 1, type="play_on", meld="m1", cards=["8S"]) == "does_not_fit"
    assert refused(s, 1, type="play_on", meld="m1", cards=["7H"], end="middle") == "bad_action"
    s2, _ = act(s, 1, type="swap_wild", meld="m1", card="7H", to="low")
    assert s2.melds[0].cards == ("2C", "5H", "6H", "7H", "8H") and s2.melds[0].low == 4
    s3, ev = act(s, 1, type="swap_wild", meld="m1", card="7H", to="high")
    assert s3.melds[0].cards == ("5H", "6H", "7H", "8H", "2C") and s3.melds[0].low == 5
    swapped = public(ev, "swapped_wild")
    assert swapped["wild"] == "2C" and swapped["card"] == "7H" and swapped["end"] == "high"
    assert refused(s3, 1, type="swap_wild", meld="m1", card="8S", to="high") == "no_wild_there"
    assert refused(s3, 1, type="swap_wild", meld="m2", card="8S", to="high") == "set_wilds_stay"


# ---- a full run (hand 6, four players: seat 3 buys two cards with Possos) -----------

RUN8 = ["3S", "4S", "5S", "2H", "7S", "8S", "9S", "10S"]


@pytest.fixture
def hand6() -> PossoState:
    """Seat 3 Possos JS (+QS) and KS (+AS), draws 6S and goes down."""
    h0 = ["3C", "3D", "4C", "4D", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "KC"]
    h1 = ["KS", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "KH", "AH"]
    h2 = ["6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", "AD", "AC", "QS", "JS"]
    h3 = [*RUN8, "QC", "QD", "QH", "5D"]
    s = game(4, [h0, h1, h2, h3], "JS", ["QS", "4C", "AS", "4D", "6S"], hand=6)
    s, _ = act(s, 3, type="call_posso")
    s = close_window(s)
    s, _ = act(s, 1, type="answer_posso", allow=True)
    s, _ = act(s, 1, type="draw", source="stack")
    s, _ = act(s, 1, type="discard", card="KS")
    s, _ = act(s, 3, type="call_posso")
    s = close_window(s)
    s, _ = act(s, 2, type="answer_posso", allow=True)
    s, _ = act(s, 2, type="draw", source="stack")
    s, _ = act(s, 2, type="discard", card="4D")
    s = close_window(s)
    s, _ = act(s, 3, type="draw", source="stack")
    assert sorted(s.hands[3]) == sorted([*h3, "JS", "QS", "KS", "AS", "6S"])
    s, _ = act(
        s,
        3,
        type="go_down",
        melds=[{"kind": "run", "cards": RUN8}, {"kind": "set", "cards": ["QC", "QD", "QH"]}],
    )
    return s


def test_swapping_a_wild_needs_room_at_the_chosen_end(hand6: PossoState) -> None:
    assert refused(hand6, 3, type="swap_wild", meld="m1", card="6S", to="low") == "no_room"
    s, _ = act(hand6, 3, type="swap_wild", meld="m1", card="6S", to="high")
    assert s.melds[0].cards == ("3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "2H")


def test_a_full_run_takes_nothing_more(hand6: PossoState) -> None:
    s, ev = act(hand6, 3, type="play_on", meld="m1", cards=["JS", "QS", "KS", "AS"], end="high")
    meld = public(ev, "played_on")["meld"]
    assert meld["full"] and meld["low"] == "3" and meld["high"] == "A" and len(meld["cards"]) == 12
    assert refused(s, 3, type="swap_wild", meld="m1", card="6S", to="high") == "run_full"
    assert refused(s, 3, type="play_on", meld="m1", cards=["6S"]) == "run_full"
    assert sorted(s.hands[3]) == ["5D", "6S"]


def test_several_cards_join_a_run_listed_low_to_high(hand6: PossoState) -> None:
    bad = {"type": "play_on", "meld": "m1", "cards": ["QS", "JS"], "end": "high"}
    assert refused(hand6, 3, **bad) == "does_not_fit"
    s, _ = act(hand6, 3, type="play_on", meld="m1", cards=["JS", "QS"])
    assert s.melds[0].high == 12


# ---- hands five and ten: runs in different suits; hand ten goes down and out ----------


def test_hand_five_runs_must_differ_in_suit() -> None:
    h1 = ["3H", "4H", "5H", "6H", "7H", "9H", "10H", "JH", "QH", "KH", "9S"]
    other = ["3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC"]
    s = close_window(game(3, [other, h1, other], "AD", ["10S"], hand=5))
    s, _ = act(s, 1, type="draw", source="stack")
    runs = [["3H", "4H", "5H", "6H", "7H"], ["9H", "10H", "JH", "QH", "KH"]]
    action = {"type": "go_down", "melds": [{"kind": "run", "cards": r} for r in runs]}
    assert refused(s, 1, **action) == "same_suit_runs"


H10 = ["3H", "4H", "5H", "6H", "7H", "3C", "4C", "5C", "6C", "7C"]
H10 += ["3D", "4D", "5D", "6D", "2S", "JK"]
HIGH16 = ["8C", "9C", "10C", "JC", "QC", "KC", "AC", "8D", "9D", "10D", "JD", "QD", "KD", "AD"]
HIGH16 += ["3S", "4S"]


@pytest.fixture
def hand10() -> PossoState:
    s = close_window(game(3, [HIGH16, H10, HIGH16], "9S", ["8H"], hand=10))
    s, _ = act(s, 1, type="draw", source="stack")
    return s


def runs(*cards: list[str]) -> dict[str, Any]:
    return {"type": "go_down", "melds": [{"kind": "run", "cards": c} for c in cards]}


def test_hand_ten_must_lay_every_card(hand10: PossoState) -> None:
    short = runs(H10[0:5], H10[5:10], H10[10:16])
    assert refused(hand10, 1, **short) == "must_use_every_card"
    four = runs([*H10[0:5], "8H"], [*H10[5:10], "2S", "JK"], H10[10:14])
    assert refused(hand10, 1, **four) == "wrong_melds"
    two = runs([*H10[0:5], "8H"], [*H10[5:10], *H10[10:16]])
    # A meld that is no run is named before the count of melds.
    assert refused(hand10, 1, **two) == "run_mixed_suits"
    two_runs = runs([*H10[0:5], "8H"], [*H10[5:10], "2S", "JK"])
    assert refused(hand10, 1, **two_runs) == "wrong_melds"


def test_hand_ten_goes_down_and_out_at_once_and_ends_the_game(hand10: PossoState) -> None:
    s, ev = act(hand10, 1, **runs([*H10[0:5], "8H"], H10[5:10], H10[10:16]))
    assert "discarded" not in types(ev)
    assert types(ev)[-4:] == ["went_down", "went_out", "hand_ended", "game_over"]
    assert POSSO.result(s) == {"places": [[1], [0, 2]], "scores": [160, 0, 160]}
    view = POSSO.view(s, None)
    assert view["over"] and view["phase"] == "over" and view["to_act"] == []
    assert view["hands"] == [HIGH16, [], HIGH16]
    assert refused(s, 0, type="draw", source="stack") == "game_over"
    assert POSSO.legal_actions(s, 0) == []


def test_hand_ten_runs_must_differ_in_suit_even_using_every_card() -> None:
    hearts = ["3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH"]
    mine = [*hearts, "3C", "4C", "5C", "6C", "7C"]
    other = ["3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", "AD"]
    other += ["3S", "4S", "5S", "6S"]
    s = close_window(game(3, [other, mine, other], "9S", ["8C"], hand=10))
    s, _ = act(s, 1, type="draw", source="stack")
    two_hearts = runs(hearts[0:6], hearts[6:11], ["3C", "4C", "5C", "6C", "7C", "8C"])
    assert refused(s, 1, **two_hearts) == "same_suit_runs"
