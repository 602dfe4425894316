"""Posso's fixed tables: the ten requirements, what a card is worth, what is wild.

Values for runs put the ace at 14: Posso runs go 3 (low) .. A (high) with no
wrap and no low ace, so a run of L cards starting at value `lo` stands on
`lo .. lo + L - 1`, all inside 3..14.  Twos and jokers are wild and never stand
for themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.games.cards import JOKER, RANK_VALUE, RANKS, SUITS

LOWEST = 3  # the low end of every run: twos are wild
HIGHEST = 14  # the ace
FULL_RUN = HIGHEST - LOWEST + 1  # 3..A, twelve cards
LAST_HAND = 10

SET = "set"
RUN = "run"


def is_wild(code: str) -> bool:
    return code == JOKER or code[:-1] == "2"


def value(code: str) -> int:
    """3..14 for a natural (ace high); only call it on naturals."""
    v = RANK_VALUE[code[:-1]]
    return HIGHEST if v == 1 else v


def natural(v: int, suit: str) -> str:
    """The card code for value 3..14 in a suit."""
    return RANKS[0 if v == HIGHEST else v - 1] + suit


def value_text(v: int) -> str:
    return RANKS[0 if v == HIGHEST else v - 1]


def points(code: str) -> int:
    """Penalty points of a card left in hand at the end of a hand."""
    if code == JOKER:
        return 0
    r = code[:-1]
    if r == "2":
        return 20
    if r == "A":
        return 15
    if r in ("8", "9", "10", "J", "Q", "K"):
        return 10
    return 5


def hand_points(cards: list[str]) -> int:
    return sum(points(c) for c in cards)


@dataclass(frozen=True)
class Requirement:
    """What must be laid to go down in one hand.  `melds` are (kind, size);
    in the last hand the sizes are minimums and every card must be used."""

    hand: int
    melds: tuple[tuple[str, int], ...]
    distinct_suits: bool
    all_cards: bool
    text: str

    @property
    def deal(self) -> int:
        return 6 + self.hand

    @property
    def runs(self) -> list[int]:
        return [n for k, n in self.melds if k == RUN]

    @property
    def sets(self) -> list[int]:
        return [n for k, n in self.melds if k == SET]

    def sizes(self, kind: str) -> tuple[int, ...]:
        """The sizes a meld of `kind` may have when laid to go down this hand,
        smallest first; none when the hand lays no such meld.  The last hand's
        runs are minimums: any length from there up to a full run."""
        wanted = sorted({n for k, n in self.melds if k == kind})
        if self.all_cards and wanted:
            return tuple(range(wanted[0], FULL_RUN + 1))
        return tuple(wanted)

    def as_json(self) -> dict[str, Any]:
        return {
            "hand": self.hand,
            "deal": self.deal,
            "text": self.text,
            "melds": [{"kind": k, "size": n} for k, n in self.melds],
            "distinct_suits": self.distinct_suits,
            "all_cards": self.all_cards,
        }


def _req(
    hand: int, melds: list[tuple[str, int]], text: str, *, distinct: bool = False
) -> Requirement:
    return Requirement(hand, tuple(melds), distinct, hand == LAST_HAND, text)


REQUIREMENTS: dict[int, Requirement] = {
    1: _req(1, [(SET, 3), (SET, 3)], "two threes of a kind"),
    2: _req(2, [(SET, 3), (RUN, 4)], "a three of a kind and a run of four"),
    3: _req(3, [(SET, 4), (SET, 4)], "two fours of a kind"),
    4: _req(4, [(SET, 4), (RUN, 5)], "a four of a kind and a run of five"),
    5: _req(5, [(RUN, 5), (RUN, 5)], "two runs of five, in different suits", distinct=True),
    6: _req(6, [(RUN, 8), (SET, 3)], "a run of eight and a three of a kind"),
    7: _req(7, [(SET, 4), (SET, 4), (SET, 4)], "three fours of a kind"),
    8: _req(8, [(SET, 4), (SET, 4), (RUN, 5)], "two fours of a kind and a run of five"),
    9: _req(
        9,
        [(RUN, 5), (RUN, 5), (SET, 4)],
        "two runs of five in different suits and a four of a kind",
        distinct=True,
    ),
    10: _req(
        10,
        [(RUN, 5), (RUN, 5), (RUN, 5)],
        "three runs of five or more in different suits, every card, no discard",
        distinct=True,
    ),
}

__all__ = [
    "FULL_RUN",
    "HIGHEST",
    "LAST_HAND",
    "LOWEST",
    "REQUIREMENTS",
    "RUN",
    "SET",
    "SUITS",
    "Requirement",
    "hand_points",
    "is_wild",
    "natural",
    "points",
    "value",
    "value_text",
]
