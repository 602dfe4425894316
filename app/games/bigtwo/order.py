"""Big Two's card order: faces 3 < 4 < ... < K < A < 2, suits C < S < H < D.

Every card gets one integer `power` (face * 4 + suit) so that comparing two
singles, or the top cards of two straights, is one integer comparison.  The
face index is `power >> 2` and the suit index `power & 3`.

Straights are a separate matter: they follow the *natural* cycle A-2-3-...-K-A
(docs/games/bigtwo.md, Rulings), so a straight is recognised from the natural ranks (A=0 .. K=12)
and only then ranked by power.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.games import cards

FACES: tuple[str, ...] = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")
SUIT_ORDER: tuple[str, ...] = ("C", "S", "H", "D")

POWER: dict[str, int] = {
    face + suit: fi * 4 + si for fi, face in enumerate(FACES) for si, suit in enumerate(SUIT_ORDER)
}

#: natural rank index, A=0 .. K=12, the order straights are built in
NATURAL: dict[str, int] = {code: cards.rank(code) - 1 for code in POWER}

#: the 13 five-face windows of the cycle A-2-3-...-K-A, as natural ranks (and
#: below, each as a bit mask of them)
STRAIGHT_WINDOWS: tuple[tuple[int, ...], ...] = tuple(
    tuple((start + i) % 13 for i in range(5)) for start in range(13)
)
STRAIGHT_MASKS: frozenset[int] = frozenset(
    sum(1 << r for r in window) for window in STRAIGHT_WINDOWS
)

DECK: tuple[str, ...] = tuple(cards.standard_deck())
THREE_OF_CLUBS = "3C"


#: each card's face (its power >> 2) and suit index (its power & 3), as tables
#: for the play generator's inner loops
FACE: dict[str, int] = {code: power >> 2 for code, power in POWER.items()}
SUIT: dict[str, int] = {code: power & 3 for code, power in POWER.items()}


def face(code: str) -> int:
    """0 for a 3 .. 12 for a 2."""
    return FACE[code]


def suit_rank(code: str) -> int:
    """0 for clubs .. 3 for diamonds."""
    return SUIT[code]


def by_power(codes: Iterable[str]) -> list[str]:
    return sorted(codes, key=POWER.__getitem__)


def natural_mask(codes: Iterable[str]) -> int:
    mask = 0
    for code in codes:
        mask |= 1 << NATURAL[code]
    return mask
