"""The value patterns of Possum, base and variations, against brute force."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.possum.model import PossumOptions
from app.games.possum.patterns import candidates, pattern_of

BASE = PossumOptions()
MULTIPLY = PossumOptions(multiply=True)
MULTI = PossumOptions(multi=True)
BOTH = PossumOptions(multi=True, multiply=True)


@pytest.mark.parametrize(
    ("values", "top", "options", "expected"),
    [
        ([7], 7, BASE, "same"),
        ([6], 7, BASE, None),
        ([7, 7], 7, BASE, None),  # two equal cards only with multi
        ([3, 4], 7, BASE, "sum"),
        ([4, 3], 7, BASE, "sum"),
        ([3, 5], 7, BASE, None),
        ([4, 7], 3, BASE, "plus_top"),  # 4 + 3 = 7
        ([7, 4], 3, BASE, "plus_top"),
        ([1, 2, 4], 7, BASE, None),  # three cards only with multi
        ([2, 4], 8, BASE, None),  # products only with multiply
        ([2, 4], 8, MULTIPLY, "product"),
        ([4, 12], 3, MULTIPLY, "times_top"),  # 4 * 3 = 12
        ([4, 12], 3, BASE, None),
        ([1, 13], 13, MULTIPLY, "product"),
        ([5, 5, 5], 5, MULTI, "same"),
        ([5, 5], 5, MULTI, "same"),
        ([2, 3, 4], 9, MULTI, "sum"),
        ([2, 3, 9], 4, MULTI, "plus_top"),  # 2 + 3 + 4 = 9
        ([3, 4], 7, MULTI, "sum"),  # the two-card versions stay
        ([4, 7], 3, MULTI, "plus_top"),
        ([1, 2, 3, 1], 7, MULTI, None),  # never four different-value cards
        ([2, 2, 3], 12, BOTH, None),  # products are of exactly two cards
        ([2, 6], 12, BOTH, "product"),
        ([2, 4], 8, MULTI, None),
    ],
)
def test_pattern_of(
    values: list[int], top: int, options: PossumOptions, expected: str | None
) -> None:
    assert pattern_of(values, top, options) == expected


def sub_multisets(have: Counter[int], limit: int) -> set[tuple[int, ...]]:
    items = sorted(have.elements())
    return {
        pick
        for size in range(1, min(limit, len(items)) + 1)
        for pick in itertools.combinations(items, size)
    }


@settings(max_examples=150)
@given(
    st.lists(st.integers(1, 13), min_size=1, max_size=12),
    st.integers(1, 13),
    st.booleans(),
    st.booleans(),
)
def test_candidates_are_exactly_the_sub_multisets_that_are_plays(
    hand: list[int], top: int, multi: bool, multiply: bool
) -> None:
    options = PossumOptions(multi=multi, multiply=multiply)
    have = Counter(hand)
    brute = {pick for pick in sub_multisets(have, 12) if pattern_of(pick, top, options)}
    assert set(candidates(have, top, options)) == brute
