"""Which multisets of card values are plays against a top value.

The plays of docs/games/possum.md (Plays, Rulings); T is the top card's value:
- base: one card equal to T; two cards summing to T; x and y with x + T = y;
- `multiply` adds: two cards whose product is T; x and y with x * T = y;
- `multi` replaces the base three with: one or more cards equal to T; two or
  three cards summing to T; one or two cards x with sum(x) + T = y.
Products stay "exactly two cards" under `multi`.

Everything here works on values only; which suit goes on top is the caller's
business.  `pattern_of` judges a play, `candidates` lists every value multiset
a hand could play, and both follow the same table, which the tests cross-check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache

from app.games.possum.model import PossumOptions

Values = tuple[int, ...]

#: pattern names carried by the `played` event
SAME, SUM, PLUS_TOP, PRODUCT, TIMES_TOP = "same", "sum", "plus_top", "product", "times_top"


def pattern_of(values: Sequence[int], top: int, options: PossumOptions) -> str | None:
    """The pattern these values make against `top`, or None."""
    n = len(values)
    multi = options.multi
    if n == 0:
        return None
    if all(v == top for v in values) and (n == 1 or multi):
        return SAME
    if n == 2 or (multi and n == 3):
        total = sum(values)
        if total == top:
            return SUM
        for y in set(values):
            if total - y + top == y:
                return PLUS_TOP
    if options.multiply and n == 2:
        a, b = values
        if a * b == top:
            return PRODUCT
        if a * top == b or b * top == a:
            return TIMES_TOP
    return None


#: the most copies of one value a hand can hold (two decks, four suits)
MAX_COPIES = 8


def candidates(have: Counter[int], top: int, options: PossumOptions) -> list[Values]:
    """Every value multiset (sorted) that is a play and that `have` can pay for."""
    return [
        values
        for values, need in _patterns(top, options.multi, options.multiply)
        if all(have[v] >= k for v, k in need)
    ]


def can_play(have: Counter[int], top: int, options: PossumOptions) -> bool:
    return any(
        all(have[v] >= k for v, k in need)
        for _, need in _patterns(top, options.multi, options.multiply)
    )


@cache
def _patterns(
    top: int, multi: bool, multiply: bool
) -> tuple[tuple[Values, tuple[tuple[int, int], ...]], ...]:
    """Every value multiset that is a play against `top`, whatever the hand,
    each with the count of every value it needs."""
    found: set[Values] = {(top,)}
    if multi:
        for k in range(2, MAX_COPIES + 1):
            found.add((top,) * k)
    for a in range(1, top // 2 + 1):
        found.add((a, top - a))
    for x in range(1, 14 - top):
        found.add((x, x + top))
    if multi:
        for a in range(1, top + 1):
            for b in range(a, top + 1):
                c = top - a - b
                if c >= b:
                    found.add((a, b, c))
        for x1 in range(1, 14):
            for x2 in range(x1, 14 - top - x1):
                found.add((x1, x2, x1 + x2 + top))
    if multiply:
        for a in range(1, top + 1):
            if top % a == 0 and a <= top // a:
                found.add((a, top // a))
        for x in range(1, 14):
            if x * top <= 13:
                found.add((x, x * top))
    return tuple((values, tuple(Counter(values).items())) for values in sorted(found))
