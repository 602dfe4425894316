"""Laying, extending and swapping melds, rule by rule."""

from __future__ import annotations

import pytest

from app.games.base import IllegalAction
from app.games.posso.melds import Meld, extend, new_meld, swap


def code(fn: object, *args: object) -> str:
    with pytest.raises(IllegalAction) as err:
        fn(*args)  # type: ignore[operator]
    return err.value.code


def run(cards: list[str]) -> Meld:
    return new_meld("m1", 0, "run", cards)


def test_wilds_may_be_at_most_half_when_laid() -> None:
    assert new_meld("m1", 0, "set", ["5H", "5C", "JK"]).rank == 5
    assert code(new_meld, "m1", 0, "set", ["5H", "2C", "JK"]) == "too_many_wilds"
    assert run(["3S", "2C", "5S", "JK"]).low == 3  # a run of four may hold two
    assert code(new_meld, "m1", 0, "run", ["3S", "2C", "JK", "6S", "2D"]) == "too_many_wilds"
    eight = ["2C", "4D", "2D", "6D", "JK", "8D", "2H", "10D"]
    assert run(eight).low == 3 and run(eight).high == 10
    assert code(new_meld, "m1", 0, "set", ["2C", "JK", "2D"]) == "too_many_wilds"


def test_runs_are_one_suit_consecutive_three_to_ace() -> None:
    assert run(["2S", "QH", "KH", "AH"]).low == 11  # the wild stands where listed: J
    assert code(new_meld, "m1", 0, "run", ["QH", "KH", "AH", "2S"]) == "bad_run"  # no wrap
    assert code(new_meld, "m1", 0, "run", ["2S", "3H", "4H", "5H"]) == "bad_run"  # no 2 slot
    assert code(new_meld, "m1", 0, "run", ["AH", "2S", "3H", "4H"]) == "bad_run"  # no low ace
    assert code(new_meld, "m1", 0, "run", ["3H", "4H", "5D", "6H"]) == "run_mixed_suits"
    assert code(new_meld, "m1", 0, "set", ["5H", "6H", "JK"]) == "bad_set"


def test_a_lone_wild_joins_high_unless_the_run_reaches_ace() -> None:
    r = run(["5H", "6H", "7H", "8H"])
    assert extend(r, ["JK"], None) == (
        Meld("m1", 0, "run", ("5H", "6H", "7H", "8H", "JK"), "H", 5),
        "high",
    )
    top = run(["JH", "QH", "KH", "AH"])
    grown, end = extend(top, ["JK"], None)
    assert end == "low" and grown.low == 10 and grown.cards[0] == "JK"
    assert code(extend, top, ["JK"], "high") == "does_not_fit"


def test_several_cards_join_one_end_as_they_will_stand() -> None:
    r = run(["5H", "6H", "7H", "8H"])
    grown, end = extend(r, ["2C", "10H", "JH"], None)
    assert end == "high" and grown.high == 11
    grown, end = extend(r, ["3H", "JK"], None)
    assert end == "low" and grown.cards[:2] == ("3H", "JK") and grown.low == 3
    assert code(extend, r, ["3H", "JK", "9H"], None) == "does_not_fit"
    assert code(extend, r, ["9H"], "low") == "does_not_fit"
    bottom = run(["3H", "4H", "5H", "6H"])
    assert code(extend, bottom, ["JK"], "low") == "does_not_fit"


def test_sets_take_their_rank_and_any_number_of_wilds() -> None:
    s = new_meld("m2", 1, "set", ["9C", "9D", "9S"])
    grown, end = extend(s, ["2C", "JK", "2D", "2H", "9C"], None)
    assert end is None and len(grown.cards) == 8
    assert code(extend, s, ["10C"], None) == "does_not_fit"
    assert code(extend, s, ["9H"], "high") == "bad_action"


def test_full_runs_take_nothing() -> None:
    full = run(["3C", "4C", "5C", "6C", "7C", "8C", "9C", "2D", "JC", "QC", "KC", "AC"])
    assert full.full
    assert code(extend, full, ["JK"], None) == "run_full"
    assert code(swap, full, "10C", "high") == "run_full"


def test_swapping_a_wild_moves_it_to_the_chosen_end() -> None:
    r = run(["5H", "2C", "7H", "8H"])
    moved, wild = swap(r, "6H", "low")
    assert wild == "2C" and moved.cards == ("2C", "5H", "6H", "7H", "8H") and moved.low == 4
    moved, _ = swap(r, "6H", "high")
    assert moved.cards == ("5H", "6H", "7H", "8H", "2C") and moved.low == 5
    assert code(swap, r, "6S", "low") == "no_wild_there"
    assert code(swap, r, "9H", "low") == "no_wild_there"
    assert code(swap, r, "JK", "low") == "bad_swap"
    assert code(swap, new_meld("m2", 1, "set", ["9C", "9D", "JK"]), "9H", "low") == "set_wilds_stay"
    assert code(swap, run(["3H", "2C", "5H", "6H"]), "4H", "low") == "no_room"
    assert code(swap, run(["JH", "2C", "KH", "AH"]), "QH", "high") == "no_room"
