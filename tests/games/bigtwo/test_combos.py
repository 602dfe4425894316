"""Classification and comparison of Big Two combinations (docs/games/bigtwo.md, Plays)."""

from __future__ import annotations

import itertools
from collections import Counter
from math import comb, prod

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.games.bigtwo.combos import Combo, classify
from app.games.bigtwo.order import DECK

NATURAL_FACES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "S", "H", "D")
#: the 13 windows of docs/games/bigtwo.md (Rulings), written out by hand rather than computed
WINDOWS = {
    frozenset(w.split())
    for w in (
        "A 2 3 4 5",
        "2 3 4 5 6",
        "3 4 5 6 7",
        "4 5 6 7 8",
        "5 6 7 8 9",
        "6 7 8 9 10",
        "7 8 9 10 J",
        "8 9 10 J Q",
        "9 10 J Q K",
        "10 J Q K A",
        "J Q K A 2",
        "Q K A 2 3",
        "K A 2 3 4",
    )
}


def c(text: str) -> Combo:
    combo = classify(text.split())
    assert combo is not None, f"{text} should be a combination"
    return combo


def beats(a: str, b: str) -> bool:
    return c(a).beats(c(b))


# -- classification ---------------------------------------------------------


def test_exactly_the_13_windows_of_distinct_faces_are_straights() -> None:
    straights = 0
    for faces in itertools.combinations(NATURAL_FACES, 5):
        # mixed suits, never a flush
        hand = [f + SUITS[i % 4] for i, f in enumerate(faces)]
        combo = classify(hand)
        if frozenset(faces) in WINDOWS:
            assert combo is not None and combo.category == "straight", faces
            straights += 1
        else:
            assert combo is None, f"{hand} is not a combination, got {combo}"
    assert straights == 13


def test_every_same_suit_five_is_a_flush_or_a_straight_flush() -> None:
    seen = Counter()
    for suit in SUITS:
        for faces in itertools.combinations(NATURAL_FACES, 5):
            combo = classify([f + suit for f in faces])
            assert combo is not None
            expected = "straight_flush" if frozenset(faces) in WINDOWS else "flush"
            assert combo.category == expected, faces
            seen[combo.category] += 1
    assert seen == {"straight_flush": 52, "flush": 4 * 1287 - 52}


def test_every_full_house_and_four_of_a_kind_is_recognised() -> None:
    full_houses = fours = 0
    by_face = {f: [f + s for s in SUITS] for f in NATURAL_FACES}
    for three_face, two_face in itertools.permutations(NATURAL_FACES, 2):
        for three in itertools.combinations(by_face[three_face], 3):
            for two in itertools.combinations(by_face[two_face], 2):
                combo = classify([*three, *two])
                assert combo is not None and combo.category == "full_house"
                full_houses += 1
    for four_face in NATURAL_FACES:
        for fifth in DECK:
            if fifth[:-1] != four_face:
                combo = classify([*by_face[four_face], fifth])
                assert combo is not None and combo.category == "four_of_a_kind"
                fours += 1
    assert (full_houses, fours) == (3744, 624)


def test_all_2598960_five_card_hands_by_symmetry() -> None:
    """Every face multiset is classified once per suit pattern and weighted by
    the number of real hands it stands for; the totals must be exactly those
    of the five categories, and everything else must be refused."""
    totals: Counter[str] = Counter()
    for faces in itertools.combinations_with_replacement(NATURAL_FACES, 5):
        mult = Counter(faces)
        if max(mult.values()) > 4:
            continue
        if len(mult) == 5:
            for suit in SUITS:  # the 4 flushes
                totals[_category([f + suit for f in faces])] += 1
            mixed = [f + SUITS[i % 4] for i, f in enumerate(faces)]
            totals[_category(mixed)] += 4**5 - 4
        else:
            used: Counter[str] = Counter()
            hand = []
            for f in faces:
                hand.append(f + SUITS[used[f]])
                used[f] += 1
            totals[_category(hand)] += prod(comb(4, m) for m in mult.values())
    assert sum(totals.values()) == comb(52, 5)
    assert totals == {
        "straight_flush": 52,
        "four_of_a_kind": 624,
        "full_house": 3744,
        "flush": 5096,
        "straight": 13 * (4**5 - 4),
        "none": comb(52, 5) - 52 - 624 - 3744 - 5096 - 13 * (4**5 - 4),
    }


def _category(hand: list[str]) -> str:
    combo = classify(hand)
    return "none" if combo is None else combo.category


@given(st.lists(st.sampled_from(DECK), min_size=5, max_size=5, unique=True), st.data())
def test_a_non_flush_of_distinct_faces_depends_only_on_its_faces(
    hand: list[str], data: st.DataObject
) -> None:
    """Backs the symmetry argument above: re-suiting a hand (keeping whether
    it is a flush) never changes what it is."""
    faces = [h[:-1] for h in hand]
    if len(set(faces)) < 5 or len({h[-1] for h in hand}) == 1:
        return
    suits = data.draw(st.lists(st.sampled_from(SUITS), min_size=5, max_size=5))
    if len(set(suits)) == 1:
        return
    resuited = [f + s for f, s in zip(faces, suits, strict=True)]
    assert _category(resuited) == _category(hand)


@pytest.mark.parametrize(
    "cards",
    [
        "3C 4C 5C 6C",  # four cards are never a play
        "3C 3S 3H 3D",
        "3C 4C",
        "3C 3S 4C",
        "3C 3S 4C 4S 5C",  # two pair
        "3C 3S 3H 4C 5C",  # three and two singles
        "3C 3S 4H 5C 6C",  # a pair
        "3C 4S 5H 6C 8C",  # a gap
        "3C 4S 5H 6C 7D 8D",
    ],
)
def test_non_combinations(cards: str) -> None:
    assert classify(cards.split()) is None


# -- comparison ---------------------------------------------------------------


def test_singles_by_face_then_suit() -> None:
    assert beats("7H", "3H")
    assert beats("10H", "10C") and not beats("10C", "10H")
    assert beats("AC", "KD") and beats("2C", "AD") and beats("4C", "3D")
    assert beats("3S", "3C") and beats("3H", "3S") and beats("3D", "3H")
    for other in DECK:
        if other != "2D":
            assert beats("2D", other) and not beats(other, "2D")


def test_pairs_by_face_then_the_higher_suit() -> None:
    assert beats("10H 10D", "5S 5C")
    assert beats("3D 3C", "3H 3S")  # a pair compares its higher suit: D > H
    assert not beats("3H 3S", "3D 3C")
    assert beats("2D 2C", "AD AH") and beats("2C 2S", "AS AD")
    assert beats("4C 4S", "3H 3D")


def test_triples_by_face() -> None:
    assert beats("7C 7D 7H", "3C 3D 3S")
    assert beats("2C 2S 2H", "AC AS AD")
    assert not beats("3C 3D 3S", "7C 7D 7H")


def test_straights_rank_by_their_highest_card() -> None:
    assert beats("10C JC QC KC AS", "9C 10D JD QD KD")  # AS is above any K
    assert beats("10C JC QC KH AS", "10D JD QD KD AC")  # same faces: AS > AC
    # any straight holding 2D is the top straight, whichever window
    with_2d = [
        "AC 2D 3C 4C 5S",
        "2D 3C 4C 5S 6S",
        "JC QC KC AS 2D",
        "QS KC AS 2D 3C",
        "KC AS 2D 3C 4C",
    ]
    for top in with_2d:
        for other in ("JC QD KD AD 2H", "10C JC QC KD AD", "3D 4D 5D 6C 7C", "AS 2H 3C 4C 5C"):
            assert beats(top, other)
    # A-2-3-4-5 holding 2D beats J-Q-K-A-2 holding 2H: the highest card decides
    assert beats("AC 2D 3C 4C 5S", "JC QC KC AD 2H")
    # 3-4-5-6-7 is the lowest straight: every other window beats it
    lowest = "3D 4D 5D 6D 7H"
    for other in ("4C 5C 6C 7C 8S", "AC 2C 3S 4C 5C", "KC AC 2C 3C 4S", "2C 3C 4C 5C 6S"):
        assert beats(other, lowest) and not beats(lowest, other)


def test_flushes_by_suit_then_highest_card() -> None:
    assert beats("3H 4H 5H 6H 8H", "9S JS QS KS AS")  # hearts above spades
    assert beats("3D 4D 5D 6D 8D", "9H JH QH KH 2H")
    assert beats("3C 5C 6C 7C 2C", "4C 9C JC QC AC")  # same suit: 2C > AC
    assert not beats("9S JS QS KS AS", "3H 4H 5H 6H 8H")


def test_full_houses_by_the_triple_and_fours_by_the_four() -> None:
    assert beats("4C 4S 4H 3C 3S", "3H 3D 3C 2C 2S")
    assert beats("2C 2S 2H 3C 3S", "AC AS AH KC KS")
    assert beats("5C 5S 5H 5D 3C", "4C 4S 4H 4D 2D")
    assert beats("2C 2S 2H 2D 3C", "AC AS AH AD KD")


def test_straight_flushes_rank_by_their_highest_card() -> None:
    assert beats("4C 5C 6C 7C 8C", "3D 4D 5D 6D 7D")
    assert beats("AD 2D 3D 4D 5D", "JS QS KS AS 2S")
    assert beats("10S JS QS KS AS", "9D 10D JD QD KD")


def test_higher_categories_beat_every_lower_one() -> None:
    ladder = [
        "10C JC QC KC AS",  # a high straight
        "3C 4C 5C 6C 8C",  # the lowest flush
        "3C 3S 3H 4C 4S",  # the lowest full house
        "3C 3S 3H 3D 4C",  # the lowest four of a kind
        "3C 4C 5C 6C 7C",  # the lowest straight flush
    ]
    strongest = [
        "JD QD KD AS 2D",  # the top straight
        "9D JD QD AD 2D",  # the top flush
        "2C 2S 2H AC AS",  # the top full house
        "2C 2S 2H 2D AD",  # the top four of a kind
    ]
    for low_cat in range(5):
        for high_cat in range(low_cat + 1, 5):
            assert beats(ladder[high_cat], strongest[low_cat] if low_cat < 4 else ladder[low_cat])
            assert not beats(strongest[low_cat], ladder[high_cat])
    assert [c(h).category for h in ladder] == [
        "straight",
        "flush",
        "full_house",
        "four_of_a_kind",
        "straight_flush",
    ]


def test_different_sizes_never_beat_each_other() -> None:
    assert not beats("3C 3S", "2D")
    assert not beats("2D", "3C 3S")
    assert not beats("3C 4C 5C 6C 7C", "2C 2S 2H")
