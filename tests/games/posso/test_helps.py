"""Could the card in a Posso window help a seat ("only ask me when the card
could help me")?  Read from the seat's own hand and public facts only."""

from __future__ import annotations

import pytest

from app.games.posso import POSSO
from app.games.posso.helps import card_helps, window_helps
from tests.games.posso.helpers import act, game

SETS_ONLY = 1  # hand one: two threes of a kind
SET_AND_RUN = 2  # hand two: a three of a kind and a run of four
RUNS_ONLY = 5  # hand five: two runs of five


@pytest.mark.parametrize(
    ("hand", "card", "hand_no", "helps"),
    [
        (["9H", "4C"], "9S", SETS_ONLY, True),  # a rank held, for a set
        (["9H", "4C"], "10H", SETS_ONLY, False),  # a set hand: a neighbour is no help
        (["9H", "4C"], "2D", SETS_ONLY, True),  # a wild always could
        (["9H", "4C"], "JK", RUNS_ONLY, True),
        (["9H", "4C"], "QH", SET_AND_RUN, True),  # within a run of four of the 9H
        (["9H", "4C"], "KH", SET_AND_RUN, False),  # four apart: no run of four holds both
        (["9H", "4C"], "9C", RUNS_ONLY, False),  # a run hand: a rank held is no help
        (["9H", "4C"], "AH", RUNS_ONLY, False),
        (["9H", "4C"], "8C", RUNS_ONLY, True),  # 4C..8C is a run of five
        (["9H", "2C"], "9H", RUNS_ONLY, False),  # a copy cannot stand twice in a run
    ],
)
def test_a_card_helps_when_it_would_join_a_meld_the_hand_lays(
    hand: list[str], card: str, hand_no: int, helps: bool
) -> None:
    assert card_helps(hand, card, hand_no, down=False) is helps


def test_once_down_no_card_is_counted_as_helping() -> None:
    assert card_helps(["9H"], "9S", SETS_ONLY, down=True) is False
    assert card_helps(["9H"], "JK", SETS_ONLY, down=True) is False


def test_the_window_asks_only_about_its_own_card_and_the_seats_own_hand() -> None:
    s = game(
        3,
        [
            ["3H", "3C", "5D", "5H", "9S", "9C", "KD"],
            ["4H", "4C", "4D", "4S", "6H", "6C", "6D"],
            ["QS", "QH", "QD", "QC", "JS", "JH", "JD"],
        ],
        "9D",
    )
    assert s.phase == "posso_window"
    assert window_helps(s, 0) is True  # holds nines
    assert window_helps(s, 2) is False  # queens only
    assert POSSO.view(s, 0)["posso"]["helps"] is True
    assert POSSO.view(s, 2)["posso"]["helps"] is False
    for seat in sorted(s.eligible):
        s, _ = act(s, seat, type="pass_posso")
    assert s.phase != "posso_window" and window_helps(s, 0) is None
