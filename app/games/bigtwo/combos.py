"""What a set of cards is worth in Big Two, and whether it beats the table.

A combination is reduced to (size, key): two combinations meet only when they
have the same size, and then the larger key wins.  For five-card hands the key
starts with the category (straight 0 .. straight flush 4), so a higher category
beats any lower one without a special case.  Within a category the key follows
docs/games/bigtwo.md (Rulings): straights and straight flushes by their highest
card in Big Two order (face, then suit), flushes by suit then highest card, full
houses by the triple, four of a kind by the four; pairs by face then the higher
suit, triples by face.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.games.bigtwo.order import POWER, STRAIGHT_MASKS, natural_mask

FIVE_CATEGORIES: tuple[str, ...] = (
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
)
CATEGORY_OF_SIZE: dict[int, str] = {1: "single", 2: "pair", 3: "triple"}

#: how a category reads in a message to a player
ARTICLE: dict[str, str] = {
    "single": "a single",
    "pair": "a pair",
    "triple": "three of a kind",
    "straight": "a straight",
    "flush": "a flush",
    "full_house": "a full house",
    "four_of_a_kind": "four of a kind",
    "straight_flush": "a straight flush",
}
SIZE_NAME: dict[int, str] = {1: "a single", 2: "a pair", 3: "three of a kind", 5: "a 5-card hand"}


@dataclass(frozen=True)
class Combo:
    category: str
    size: int
    key: tuple[int, ...]

    def beats(self, other: Combo) -> bool:
        return self.size == other.size and self.key > other.key


#: each card played alone (a Combo is immutable: plays share them)
SINGLE: dict[str, Combo] = {code: Combo("single", 1, (power,)) for code, power in POWER.items()}


def classify(codes: Sequence[str]) -> Combo | None:
    """The combination these (distinct, valid) cards make, or None."""
    n = len(codes)
    if n == 1 and codes[0] in SINGLE:  # most plays: one Combo per card, made once
        return SINGLE[codes[0]]
    powers = [POWER[c] for c in codes]
    top = max(powers) if powers else 0
    faces = [p >> 2 for p in powers]
    if n == 1:
        return Combo("single", 1, (top,))
    if n == 2:
        return Combo("pair", 2, (top,)) if faces[0] == faces[1] else None
    if n == 3:
        return Combo("triple", 3, (faces[0],)) if faces[0] == faces[1] == faces[2] else None
    if n != 5:
        return None
    distinct = set(faces)
    if len(distinct) == 2:  # 4 + 1 or 3 + 2
        first = faces[0]
        held = faces.count(first)
        big = first if held >= 3 else (distinct - {first}).pop()
        if held in (1, 4):
            return Combo("four_of_a_kind", 5, (3, big))
        return Combo("full_house", 5, (2, big))
    if len(distinct) < 5:  # a pair or three of a kind with odd cards
        return None
    flush = len({p & 3 for p in powers}) == 1
    straight = natural_mask(codes) in STRAIGHT_MASKS
    if straight and flush:
        return Combo("straight_flush", 5, (4, top))
    if flush:
        return Combo("flush", 5, (1, top & 3, top))
    if straight:
        return Combo("straight", 5, (0, top))
    return None
