"""The melds a player may stage from their hand while arranging a go-down,
listed by the engine so the table offers exactly those and judges nothing
itself (docs/games/posso.md, "Melds you can make").

A go-down is a whole arrangement, so `legal_actions` lists one of them; but a
person builds it a meld at a time, and the table must know, for any cards
they pick, whether those cards make a set or a run this hand may lay.  The
picks that do are described rather than listed (a hand of 17 cards has far
too many subsets): each entry is a group of naturals from the hand and the
`counts` of naturals and wilds a meld may take from it.  Picked cards make a
meld of that kind exactly when their naturals are all in one entry's `cards`
(copies counted) and (naturals, wilds) is one of its `counts`:

- a set: the naturals of one rank the hand holds;
- a run: the naturals of one suit that fit in one window of a size the hand
  needs (only windows no other window of that size contains are listed).

`counts` apply the hand's meld sizes, at least one natural and the half-wild
limit for going down, and the wilds the hand holds.  An entry may have no
counts (the hand lacks the wilds to finish it): the table then tells the
player what is missing rather than calling their cards unrelated.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from app.games.posso.rules import (
    HIGHEST,
    LOWEST,
    REQUIREMENTS,
    RUN,
    SET,
    SUITS,
    is_wild,
    natural,
    value,
)

Counts = frozenset[tuple[int, int]]


def meld_options(hand: list[str], hand_no: int) -> dict[str, Any]:
    """`{"wilds": [wild codes in hand], "melds": [{"kind", "cards", "counts"}]}`
    for a player arranging hand `hand_no`'s go-down from `hand`."""
    wilds, melds = _options(tuple(sorted(hand)), hand_no)
    return {
        "wilds": list(wilds),
        "melds": [
            {"kind": kind, "cards": list(cards), "counts": [list(c) for c in sorted(counts)]}
            for kind, cards, counts in melds
        ],
    }


def _counts(sizes: tuple[int, ...], naturals: int, wilds: int) -> Counts:
    """(naturals, wilds) for each allowed size: at least one natural, no more
    than the group or the hand holds, and at most half wild."""
    return frozenset(
        (n, size - n)
        for size in sizes
        for n in range(max(1, size - wilds, size - size // 2), min(size, naturals) + 1)
    )


@lru_cache(maxsize=1024)
def _options(
    hand: tuple[str, ...], hand_no: int
) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...], Counts], ...]]:
    req = REQUIREMENTS[hand_no]
    wilds = tuple(dict.fromkeys(c for c in hand if is_wild(c)))
    n_wild = sum(1 for c in hand if is_wild(c))
    naturals = [c for c in hand if not is_wild(c)]
    out: list[tuple[str, tuple[str, ...], Counts]] = []
    set_sizes = req.sizes(SET)
    if set_sizes:
        by_rank: dict[int, list[str]] = {}
        for c in naturals:
            by_rank.setdefault(value(c), []).append(c)
        for _, cards in sorted(by_rank.items()):
            out.append((SET, tuple(cards), _counts(set_sizes, len(cards), n_wild)))
    run_sizes = req.sizes(RUN)
    for suit in SUITS if run_sizes else ():
        values = sorted({value(c) for c in naturals if c[-1] == suit})
        windows: dict[tuple[int, ...], Counts] = {}
        for size in run_sizes:
            inside = {
                tuple(v for v in values if low <= v < low + size)
                for low in range(LOWEST, HIGHEST - size + 2)
            }
            inside.discard(())
            for vals in inside:
                if any(set(vals) < set(other) for other in inside):
                    continue  # a wider window of this size holds these too
                windows[vals] = windows.get(vals, frozenset()) | _counts((size,), len(vals), n_wild)
        for vals, counts in sorted(windows.items()):
            out.append((RUN, tuple(natural(v, suit) for v in vals), counts))
    return wilds, tuple(out)
