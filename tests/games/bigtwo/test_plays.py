"""The play generator against brute force over every subset of a hand."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.bigtwo.combos import classify
from app.games.bigtwo.order import DECK, by_power
from app.games.bigtwo.plays import all_plays, plays_beating

hands = st.lists(st.sampled_from(DECK), min_size=1, max_size=13, unique=True)


def brute_force(hand: list[str]) -> set[frozenset[str]]:
    return {
        frozenset(pick)
        for size in (1, 2, 3, 5)
        for pick in itertools.combinations(hand, size)
        if classify(pick) is not None
    }


@settings(max_examples=60)
@given(hands)
def test_all_plays_is_exactly_every_combination_in_the_hand(hand: list[str]) -> None:
    plays = all_plays(hand)
    as_sets = [frozenset(p[1]) for p in plays]
    assert len(as_sets) == len(set(as_sets)), "a play is listed twice"
    assert set(as_sets) == brute_force(hand)
    for combo, picked in plays:
        assert classify(picked) == combo
        assert list(picked) == by_power(picked), "a play's cards are not in power order"
    order = [(combo.size, combo.key) for combo, _ in plays]
    assert order == sorted(order), "plays are not by size, then weakest first"


@settings(max_examples=60)
@given(hands, st.lists(st.sampled_from(DECK), min_size=1, max_size=5, unique=True))
def test_plays_beating_are_exactly_the_higher_plays_of_that_size(
    hand: list[str], table_cards: list[str]
) -> None:
    table = classify(table_cards)
    if table is None:
        return
    beating = plays_beating(hand, table)
    assert [p[0].key for p in beating] == sorted(p[0].key for p in beating)
    assert all(list(p[1]) == by_power(p[1]) for p in beating)
    found = {frozenset(p[1]) for p in beating}
    expected = {
        frozenset(pick)
        for pick in itertools.combinations(hand, table.size)
        if (combo := classify(pick)) is not None and combo.beats(table)
    }
    assert found == expected


def test_a_full_suit_hand_lists_every_flush() -> None:
    hand = [r + "H" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")]
    fives = [p for p in all_plays(hand) if p[0].size == 5]
    assert len(fives) == 1287
    assert sum(p[0].category == "straight_flush" for p in fives) == 13
