"""Refusals a player reads: cards named with suit symbols, what was wrong and
what would have been legal; the codes stay the same for programs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.games.base import IllegalAction
from app.games.posso import POSSO
from app.games.posso.melds import HIGH, LOW, extend, new_meld, swap
from tests.games.posso.helpers import act, close_window, game


def refusal(fn: object, *args: object) -> IllegalAction:
    with pytest.raises(IllegalAction) as info:
        fn(*args)  # type: ignore[operator]
    return info.value


CLUB_RUN = new_meld("m5", 0, "run", ["3C", "4C", "5C", "6C", "7C", "8C"])
HIGH_RUN = new_meld("m6", 0, "run", ["10C", "JC", "QC", "KC"])
SEVENS = new_meld("m2", 1, "set", ["7H", "7S", "7D"])


@pytest.mark.parametrize(
    ("meld", "cards", "end", "code", "words"),
    [
        (CLUB_RUN, ["10C"], HIGH, "does_not_fit", ["10♣", "3♣–8♣", "takes 9♣ or a wild"]),
        (CLUB_RUN, ["10C"], LOW, "does_not_fit", ["10♣", "low end is closed at 3"]),
        (HIGH_RUN, ["10C"], HIGH, "does_not_fit", ["10♣–K♣", "takes A♣"]),
        (HIGH_RUN, ["10C"], None, "does_not_fit", ["either end", "takes 9♣", "takes A♣"]),
        (SEVENS, ["8H"], None, "does_not_fit", ["8♥", "set of 7s", "only 7s and wilds"]),
    ],
)
def test_a_card_that_does_not_fit_says_what_each_end_takes(
    meld: object, cards: list[str], end: str | None, code: str, words: list[str]
) -> None:
    err = refusal(extend, meld, cards, end)
    assert err.code == code
    for w in words:
        assert w in err.message, err.message
    assert "m5" not in err.message and "listed low to high" not in err.message


@pytest.mark.parametrize(
    ("kind", "cards", "code", "words"),
    [
        ("set", ["3C", "5C", "JK"], "bad_set", ["3♣ 5♣ joker is not a set", "differ (3 and 5)"]),
        ("run", ["3C", "4D", "5C"], "run_mixed_suits", ["mixes ♣ and ♦"]),
        ("run", ["3C", "4C", "9C"], "bad_run", ["lacks 4 card(s) and has 0 wild(s)"]),
        ("run", ["5C", "5C", "6C", "7C"], "bad_run", ["holds 5♣ twice"]),
        ("set", ["2C", "JK", "2D", "9H"], "too_many_wilds", ["3 of its 4 cards are wild"]),
    ],
)
def test_a_meld_that_is_not_one_says_why(
    kind: str, cards: list[str], code: str, words: list[str]
) -> None:
    err = refusal(new_meld, "", 0, kind, cards)
    assert err.code == code
    for w in words:
        assert w in err.message, err.message


def test_a_swap_for_no_wild_names_what_the_wilds_stand_for() -> None:
    run = new_meld("m1", 0, "run", ["5H", "2C", "7H", "8H"])
    err = refusal(swap, run, "9H", HIGH)
    assert err.code == "no_wild_there"
    assert "stands for 9♥" in err.message and "wilds stand for 6♥" in err.message


H0 = ["3H", "3C", "3D", "5H", "5S", "2C", "9H"]
H1 = ["4H", "4C", "4D", "6H", "6S", "JK", "2S"]
H2 = ["7H", "7C", "7D", "8H", "8S", "8C", "JH"]


@pytest.mark.parametrize(
    ("hand_no", "melds", "code", "words"),
    [
        (
            1,
            [("set", ["4H", "4C"]), ("set", ["6H", "6S", "JK"])],
            "wrong_melds",
            ["4♥ 4♣ is a set of 2", "too few cards", "hand 1's sets have 3"],
        ),
        (
            1,
            [("set", ["4H", "4C", "4D", "2S"]), ("set", ["6H", "6S", "JK"])],
            "wrong_melds",
            ["is a set of 4", "too many cards", "sets have 3"],
        ),
        (
            1,
            [("run", ["4S", "JK", "6S"]), ("set", ["4H", "4C", "4D"])],
            "wrong_melds",
            ["4♠ joker 6♠ is a run of 3", "hand 1 lays no runs", "two threes of a kind"],
        ),
        (
            1,
            [("set", ["4H", "6H"]), ("set", ["4C", "4D", "JK"])],
            "bad_set",
            ["4♥ 6♥ is not a set", "ranks differ (4 and 6)"],
        ),
        (
            2,
            [("run", ["4H", "JK", "6H"]), ("set", ["4C", "4D", "2S"])],
            "wrong_melds",
            ["is a run of 3", "too few cards", "hand 2's runs have 4"],
        ),
        (
            2,
            [("run", ["4H", "6H", "6S", "JK"]), ("set", ["4C", "4D", "2S"])],
            "run_mixed_suits",
            ["mixes ♥ and ♠"],
        ),
        (
            2,
            [("run", ["4H", "JK", "6H", "2S"]), ("set", ["4C", "4D", "6S"])],
            "bad_set",
            ["ranks differ"],
        ),
    ],
)
def test_a_go_down_says_which_meld_is_wrong_and_how(
    hand_no: int, melds: list[tuple[str, list[str]]], code: str, words: list[str]
) -> None:
    s = close_window(game(3, [H0, H1, H2], "QS", ["4S"], hand=1))
    s = replace(s, hand_no=hand_no)
    s, _ = act(s, 1, type="draw", source="stack")
    err = refusal(
        POSSO.apply, s, 1, {"type": "go_down", "melds": [{"kind": k, "cards": c} for k, c in melds]}
    )
    assert err.code == code, err.message
    for w in words:
        assert w in err.message, err.message
