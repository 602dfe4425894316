from __future__ import annotations

from collections import Counter

import pytest

from app.games import cards


@pytest.mark.parametrize("bad", ["11H", "ZZ", "", "10", "H", "1H", "AX", "jk", None, 7, "10HH"])
def test_bad_codes_are_refused_with_a_clear_message(bad: object) -> None:
    with pytest.raises(cards.CardError, match="is not a card"):
        cards.validate(bad)


def test_good_codes_parse() -> None:
    assert cards.rank("10H") == 10 and cards.suit("10H") == "H"
    assert cards.rank("AS") == 1 and cards.rank("KD") == 13 and cards.rank("JK") == 0
    assert cards.suit("JK") == "" and cards.rank_text("QC") == "Q"
    assert cards.make(12, "C") == "QC"


def test_jokers_can_be_refused() -> None:
    with pytest.raises(cards.CardError, match="without jokers"):
        cards.validate("JK", jokers=False)


def test_multi_deck_builds() -> None:
    d = cards.build_deck(3, jokers_per_deck=2)
    assert len(d) == 3 * 54
    counts = Counter(d)
    assert counts["JK"] == 6 and counts["AS"] == 3 and len(counts) == 53
    assert len(cards.build_deck(1)) == 52 and "JK" not in cards.build_deck(1)


def test_seeded_shuffles_repeat_and_differ() -> None:
    d = cards.build_deck(1)
    a = cards.shuffled(d, cards.rng_for(7, "deal", 1))
    b = cards.shuffled(d, cards.rng_for(7, "deal", 1))
    c = cards.shuffled(d, cards.rng_for(7, "deal", 2))
    assert a == b and a != c and sorted(a) == sorted(d)


def test_stacked_deck_puts_named_cards_on_top_and_keeps_the_rest() -> None:
    full = cards.build_deck(2, jokers_per_deck=2)
    out = cards.stacked(full, ["AS", "AS", "JK"], cards.rng_for(1))
    assert out[:3] == ["AS", "AS", "JK"]
    assert Counter(out) == Counter(full)
    assert out == cards.stacked(full, ["AS", "AS", "JK"], cards.rng_for(1))


def test_stacked_deck_refuses_too_many_copies_and_bad_codes() -> None:
    with pytest.raises(ValueError, match=r"AS 2 times.*1 copy"):
        cards.stacked(cards.build_deck(1), ["AS", "AS"], cards.rng_for(1))
    with pytest.raises(ValueError, match="is not a card"):
        cards.stacked(cards.build_deck(1), ["11H"], cards.rng_for(1))
    with pytest.raises(ValueError, match="list of card codes"):
        cards.stacked(cards.build_deck(1), "AS", cards.rng_for(1))  # type: ignore[arg-type]


def test_dealing_goes_one_card_at_a_time_clockwise_from_the_dealers_left() -> None:
    order = ["AS", "2S", "3S", "4S", "5S", "6S", "7S"]
    hands = cards.deal_clockwise(order, seats=3, dealer=2, hand_size=2)
    assert hands == [["AS", "4S"], ["2S", "5S"], ["3S", "6S"]]  # seat 0 sits left of seat 2
