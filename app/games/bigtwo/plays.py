"""Every play a hand can make, generated directly rather than by testing all
subsets: a 13-card hand has 8,191 subsets but only a few hundred plays, and
`legal_actions` runs on every turn of every random game.

Each play is a tuple of codes in power order, paired with its Combo.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import combinations, product

from app.games.bigtwo.combos import Combo, classify
from app.games.bigtwo.order import NATURAL, POWER, STRAIGHT_MASKS, STRAIGHT_WINDOWS, natural_mask

Play = tuple[Combo, tuple[str, ...]]


def _sorted(codes: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(codes, key=POWER.__getitem__))


#: every single, made once: a Combo is immutable, so plays can share them
_SINGLES: dict[str, Play] = {code: (Combo("single", 1, (POWER[code],)), (code,)) for code in POWER}


@lru_cache(maxsize=8192)
def _combo(pick: tuple[str, ...]) -> Combo:
    """The combination of a pick that is known to make one.  The same picks
    come up turn after turn while a hand waits for its chance, so they are
    classified once (a few thousand picks cover many games at once)."""
    combo = classify(pick)
    assert combo is not None
    return combo


def plays_of_size(hand: Sequence[str], size: int) -> Iterator[Play]:
    ordered = _sorted(hand)
    if size == 1:
        for code in ordered:
            yield _SINGLES[code]
        return
    by_face: dict[int, list[str]] = defaultdict(list)
    for code in ordered:
        by_face[POWER[code] >> 2].append(code)
    if size in (2, 3):
        for group in by_face.values():
            if len(group) >= size:
                for pick in combinations(group, size):
                    yield _combo(pick), pick
        return
    if size == 5:
        for pick in _five_card_sets(ordered, by_face):
            yield _combo(pick), pick


def _five_card_sets(
    ordered: tuple[str, ...], by_face: dict[int, list[str]]
) -> Iterator[tuple[str, ...]]:
    by_natural: dict[int, list[str]] = defaultdict(list)
    by_suit: dict[int, list[str]] = defaultdict(list)
    for code in ordered:
        by_natural[NATURAL[code]].append(code)
        by_suit[POWER[code] & 3].append(code)
    # straights, straight flushes included
    for window in STRAIGHT_WINDOWS:
        groups = [by_natural.get(r) for r in window]
        if all(groups):
            for pick in product(*groups):  # type: ignore[arg-type]
                yield _sorted(pick)
    # flushes that are not straights (those came above)
    for group in by_suit.values():
        if len(group) >= 5:
            for pick in combinations(group, 5):
                if natural_mask(pick) not in STRAIGHT_MASKS:
                    yield pick
    # full houses
    for triple_face, triple_cards in by_face.items():
        if len(triple_cards) < 3:
            continue
        for triple in combinations(triple_cards, 3):
            for pair_face, pair_cards in by_face.items():
                if pair_face != triple_face and len(pair_cards) >= 2:
                    for pair in combinations(pair_cards, 2):
                        yield _sorted(triple + pair)
    # four of a kind with any fifth card
    for quad_face, quad_cards in by_face.items():
        if len(quad_cards) == 4:
            for other in ordered:
                if POWER[other] >> 2 != quad_face:
                    yield _sorted((*quad_cards, other))


def all_plays(hand: Sequence[str]) -> list[Play]:
    """Every combination in the hand, by size then by strength."""
    out: list[Play] = []
    for size in (1, 2, 3, 5):
        out.extend(sorted(plays_of_size(hand, size), key=lambda p: p[0].key))
    return out


def plays_beating(hand: Sequence[str], table: Combo) -> list[Play]:
    """Every play that beats `table`, weakest first."""
    found = [p for p in plays_of_size(hand, table.size) if p[0].beats(table)]
    found.sort(key=lambda p: p[0].key)
    return found
