"""Concrete plays: one action per (multiset of cards, top card)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.games import cards
from app.games.possum.model import PossumOptions
from app.games.possum.patterns import pattern_of
from app.games.possum.plays import legal_plays

TWO_DECKS = cards.build_deck(2)


def keys(plays: list[list[str]]) -> list[tuple[tuple[tuple[str, int], ...], str]]:
    return [(tuple(sorted(Counter(p).items())), p[-1]) for p in plays]


def test_every_top_of_a_two_card_play_is_listed_once() -> None:
    plays = legal_plays(["4C", "5D", "5H"], 9, PossumOptions())
    assert sorted(map(tuple, plays)) == sorted(
        [("4C", "5D"), ("5D", "4C"), ("4C", "5H"), ("5H", "4C")]
    )


def test_identical_cards_from_two_decks_are_one_choice() -> None:
    plays = legal_plays(["4C", "5D", "5D"], 9, PossumOptions())
    assert sorted(map(tuple, plays)) == [("4C", "5D"), ("5D", "4C")]


def test_multi_lists_every_subset_of_equal_cards_with_each_top() -> None:
    plays = legal_plays(["5C", "5D", "5H", "9S"], 5, PossumOptions(multi=True))
    # 3 singles, 3 pairs with 2 tops each, the triple with 3 tops
    assert len(plays) == 3 + 6 + 3
    assert ["5C", "5D", "5H"] in plays and ["5D", "5H", "5C"] in plays
    assert len(legal_plays(["5C", "5D", "5H"], 5, PossumOptions())) == 3


@settings(max_examples=100)
@given(
    st.lists(st.sampled_from(TWO_DECKS), min_size=1, max_size=10),
    st.integers(1, 13),
    st.booleans(),
    st.booleans(),
)
def test_plays_are_distinct_held_and_valid(
    hand: list[str], top: int, multi: bool, multiply: bool
) -> None:
    options = PossumOptions(multi=multi, multiply=multiply)
    plays = legal_plays(hand, top, options)
    listed = keys(plays)
    assert len(listed) == len(set(listed)), "an action is listed twice"
    for play in plays:
        assert not Counter(play) - Counter(hand)
        assert pattern_of([cards.rank(c) for c in play], top, options)
    # and nothing is missing: every legal multiset, with each of its codes on top
    wanted = set()
    for size in range(1, min(len(hand), 8) + 1):
        for pick in set(combinations(sorted(hand), size)):
            if pattern_of([cards.rank(c) for c in pick], top, options):
                for code in set(pick):
                    wanted.add((tuple(sorted(Counter(pick).items())), code))
    assert set(listed) == wanted
