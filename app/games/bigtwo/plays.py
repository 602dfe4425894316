"""Every play a hand can make, generated directly rather than by testing all
subsets: a 13-card hand has 8,191 subsets but only a few hundred plays, and
`legal_actions` runs on every turn of every random game.

Each play is a tuple of codes in power order, paired with its Combo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import combinations, groupby, product
from operator import itemgetter

from app.games.bigtwo.combos import FIVE_CATEGORIES, SINGLE, Combo, classify
from app.games.bigtwo.order import (
    FACE,
    NATURAL,
    POWER,
    STRAIGHT_MASKS,
    STRAIGHT_WINDOWS,
    SUIT,
    natural_mask,
)

Play = tuple[Combo, tuple[str, ...]]


def _sorted(codes: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(codes, key=POWER.__getitem__))


#: every single, pair and triple, made once and keyed by its cards in power
#: order: a Combo is immutable, so plays can share them (52 + 78 + 52 of them)
_SINGLES: dict[str, Play] = {code: (SINGLE[code], (code,)) for code in POWER}


def _pairs_and_triples() -> dict[tuple[str, ...], Combo]:
    out: dict[tuple[str, ...], Combo] = {}
    for face in range(13):
        group = _sorted([code for code in POWER if POWER[code] >> 2 == face])
        for size in (2, 3):
            for pick in combinations(group, size):
                combo = classify(pick)
                assert combo is not None
                out[pick] = combo
    return out


_SETS = _pairs_and_triples()

#: five-card Combos by key (the key names the category: see combos.py); a
#: few hundred at most, where the picks that make them number in millions
_FIVES: dict[tuple[int, ...], Combo] = {}


#: the face of each natural rank (A=0 .. K=12)
_FACE_OF_NATURAL: dict[int, int] = {NATURAL[code]: FACE[code] for code in POWER}


def _power_order(window: tuple[int, ...]) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """A straight's five faces differ, so the order of its cards by power is
    the order of the window's natural ranks by face, whatever the suits: one
    C-level `itemgetter` puts a pick drawn in window order into power order."""
    return itemgetter(*sorted(range(5), key=lambda i: _FACE_OF_NATURAL[window[i]]))


#: each straight window: its faces (in the window's order), their mask, and
#: the getter that orders its picks by power
_WINDOWS = tuple(
    (
        tuple(_FACE_OF_NATURAL[r] for r in window),
        sum(1 << _FACE_OF_NATURAL[r] for r in window),
        _power_order(window),
    )
    for window in STRAIGHT_WINDOWS
)


def _five(key: tuple[int, ...]) -> Combo:
    """The five-card Combo with this key.  The generator knows each pick's
    category as it makes it, so it never classifies: with a hundred games in
    play, caching `classify` by pick missed on every other lead."""
    combo = _FIVES.get(key)
    if combo is None:
        combo = _FIVES[key] = Combo(FIVE_CATEGORIES[key[0]], 5, key)
    return combo


def plays_of_size(hand: Sequence[str], size: int) -> Iterator[Play]:
    ordered = _sorted(hand)
    return _of_size(ordered, _by_face(ordered) if size > 1 else {}, size)


def _by_face(ordered: tuple[str, ...]) -> dict[int, list[str]]:
    """The cards of `ordered` (in power order, so each face's cards are
    together) by face, faces ascending."""
    return {face: list(cards) for face, cards in groupby(ordered, FACE.__getitem__)}


def _of_size(ordered: tuple[str, ...], by_face: dict[int, list[str]], size: int) -> Iterator[Play]:
    if size == 1:
        for code in ordered:
            yield _SINGLES[code]
        return
    if size in (2, 3):
        for group in by_face.values():
            if len(group) >= size:
                for pick in combinations(group, size):
                    yield _SETS[pick], pick
        return
    if size == 5:
        yield from _five_card_plays(ordered, by_face)


def _five_card_plays(ordered: tuple[str, ...], by_face: dict[int, list[str]]) -> Iterator[Play]:
    """Straights, flushes, full houses, four of a kind, each with its Combo.
    `ordered` is in power order, and so is every group drawn from it, so a
    pick's last card is its highest."""
    # straights, straight flushes included
    held = 0
    for face in by_face:
        held |= 1 << face
    for faces, mask, in_power_order in _WINDOWS:
        if held & mask == mask:  # a card of each of the window's faces
            for pick in product(*[by_face[f] for f in faces]):
                picked = in_power_order(pick)
                top = POWER[picked[-1]]
                flush = len(set(map(SUIT.__getitem__, picked))) == 1
                yield _five((4, top) if flush else (0, top)), picked
    # flushes that are not straights (those came above)
    by_suit: dict[int, list[str]] = {}
    for code in ordered:
        by_suit.setdefault(SUIT[code], []).append(code)
    for suit, group in by_suit.items():
        if len(group) >= 5:
            for pick in combinations(group, 5):
                if natural_mask(pick) not in STRAIGHT_MASKS:
                    yield _five((1, suit, POWER[pick[-1]])), pick
    # full houses
    for triple_face, triple_cards in by_face.items():
        if len(triple_cards) < 3:
            continue
        combo = _five((2, triple_face))
        for triple in combinations(triple_cards, 3):
            for pair_face, pair_cards in by_face.items():
                if pair_face != triple_face and len(pair_cards) >= 2:
                    for pair in combinations(pair_cards, 2):
                        # two faces, each group in power order: the lower face first
                        yield combo, triple + pair if triple_face < pair_face else pair + triple
    # four of a kind with any fifth card
    for quad_face, quad_cards in by_face.items():
        if len(quad_cards) == 4:
            combo = _five((3, quad_face))
            quad = tuple(quad_cards)
            for other in ordered:
                face = FACE[other]
                if face != quad_face:
                    yield combo, (other, *quad) if face < quad_face else (*quad, other)


def all_plays(hand: Sequence[str]) -> list[Play]:
    """Every combination in the hand, by size then by strength."""
    ordered = _sorted(hand)
    by_face = _by_face(ordered)
    out: list[Play] = [_SINGLES[code] for code in ordered]  # in power order: by strength
    for size in (2, 3, 5):
        out.extend(sorted(_of_size(ordered, by_face, size), key=_strength))
    return out


def plays_beating(hand: Sequence[str], table: Combo) -> list[Play]:
    """Every play that beats `table`, weakest first."""
    key = table.key
    if table.size == 1:  # most turns: the singles above it, in power order already
        top = key[0]
        return [_SINGLES[code] for code in _sorted(hand) if POWER[code] > top]
    found = [p for p in plays_of_size(hand, table.size) if p[0].key > key]
    found.sort(key=_strength)
    return found


def _strength(play: Play) -> tuple[int, ...]:
    return play[0].key
