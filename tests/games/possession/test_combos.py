"""Property shapes, extensions, the secured label and the ajar pile."""

from __future__ import annotations

import pytest

from app.games.possession.combos import (
    ajar_depth,
    extension_problem,
    is_secured,
    new_property_kind,
    property_counts,
)
from app.games.possession.model import RUN, SET, Property, Rules

ONE = Rules(
    seats=2, decks=1, set_limit=4, distinct_sets=True, open_pile=False, distinct_suit_sets=False
)
TWO = Rules(
    seats=4, decks=2, set_limit=8, distinct_sets=False, open_pile=False, distinct_suit_sets=False
)
TWO_DISTINCT = Rules(
    seats=4, decks=2, set_limit=4, distinct_sets=True, open_pile=False, distinct_suit_sets=True
)


def prop(cards: str, kind: str, owner: int = 0, pid: str = "p1") -> Property:
    return Property(id=pid, owner=owner, kind=kind, cards=tuple(cards.split()))


@pytest.mark.parametrize(
    ("cards", "rules", "kind"),
    [
        ("7C 7D 7H", ONE, SET),
        ("7C 7D 7H 7S", ONE, SET),
        ("AS 2S 3S", ONE, RUN),
        ("JD QD KD", ONE, RUN),
        ("5S 4S 2S 3S", ONE, RUN),  # order does not matter
        ("AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD", ONE, RUN),
        ("QD KD AD", ONE, None),  # no wrap
        ("7C 7D", ONE, None),
        ("4S 5S 7S", ONE, None),
        ("4S 5H 6S", ONE, None),
        ("7H 7H 7C", TWO, SET),  # identical cards allowed with two decks
        ("7H 7H 7C 7C", TWO, SET),
        ("7H 7H 7C 7C 7D", TWO, None),  # a new set is 3 or 4 cards
        ("7H 7H 7C", TWO_DISTINCT, None),
        ("7H 7S 7C 7D", TWO_DISTINCT, SET),
        ("4S 4S 5S", TWO, None),
        ("4S 5S 5S 6S", TWO, None),
    ],
)
def test_new_property_shapes(cards: str, rules: Rules, kind: str | None) -> None:
    assert new_property_kind(cards.split(), rules) == kind


def test_a_steal_of_4_5_6_with_7_8_fits_but_3_and_7_do_not() -> None:
    p = prop("4D 5D 6D", RUN)
    assert extension_problem(p, ["7D", "8D"], ONE) is None
    assert extension_problem(p, ["8D", "7D"], ONE) is None
    assert extension_problem(p, ["3D", "2D"], ONE) is None
    problem = extension_problem(p, ["3D", "7D"], ONE)
    assert problem is not None and problem[0] == "one_end_only"
    problem = extension_problem(p, ["8D"], ONE)
    assert problem is not None and problem[0] == "not_consecutive"
    problem = extension_problem(p, ["7H"], ONE)
    assert problem is not None and problem[0] == "does_not_fit"


def test_no_wrap_at_either_end() -> None:
    problem = extension_problem(prop("JD QD KD", RUN), ["AD"], ONE)
    assert problem is not None and problem[0] == "no_wrap"
    problem = extension_problem(prop("AD 2D 3D", RUN), ["KD"], ONE)
    assert problem is not None and problem[0] == "no_wrap"
    # With other cards beside it, the ace (king) joins them: the fault is the gap.
    problem = extension_problem(prop("5D 6D 7D 8D 9D 10D JD QD KD", RUN), ["AD", "3D", "4D"], ONE)
    assert problem is not None and problem[0] == "not_consecutive"
    problem = extension_problem(prop("AD 2D 3D 4D", RUN), ["10D", "JD", "KD"], ONE)
    assert problem is not None and problem[0] == "not_consecutive"
    # With two decks the other KD exists but still cannot follow J-Q-K.
    problem = extension_problem(prop("JD QD KD", RUN), ["KD"], TWO)
    assert problem is not None and problem[0] == "does_not_fit"


def test_set_growth_limits() -> None:
    assert extension_problem(prop("7C 7D 7H", SET), ["7S"], ONE) is None
    assert extension_problem(prop("7C 7D 7H", SET), ["8S"], ONE) is not None
    full = extension_problem(prop("7C 7D 7H 7S", SET), ["7S"], TWO_DISTINCT)
    assert full is not None and full[0] == "set_full"
    dup = extension_problem(prop("7C 7D 7H", SET), ["7C"], TWO_DISTINCT)
    assert dup is not None and dup[0] == "does_not_fit"
    assert extension_problem(prop("7C 7C 7D 7H 7S", SET), ["7H", "7S", "7D"], TWO) is None
    eight = prop("7C 7C 7D 7D 7H 7H 7S 7S", SET)
    nine = extension_problem(prop("7C 7C 7D 7D 7H 7H 7S", SET), ["7S", "7S"], TWO)
    assert nine is not None and nine[0] == "set_full"
    assert is_secured(eight, property_counts([eight]), TWO)


def secured(target: Property, *others: Property, rules: Rules = ONE) -> bool:
    return is_secured(target, property_counts([target, *others]), rules)


def test_secured_four_of_a_kind_and_a_to_k_with_one_deck() -> None:
    assert secured(prop("7C 7D 7H 7S", SET))
    assert not secured(prop("7C 7D 7H", SET))
    assert secured(prop("AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD", RUN))
    assert not secured(prop("2D 3D 4D", RUN))


def test_secured_when_the_ends_are_used_in_other_properties() -> None:
    # Fours of 5s and 9s secure a 6-7-8: its ends are out of reach for good.
    fives = prop("5C 5D 5H 5S", SET, pid="p1")
    nines = prop("9C 9D 9H 9S", SET, pid="p2")
    run = prop("6H 7H 8H", RUN, pid="p3")
    assert secured(run, fives, nines)
    assert not secured(run, fives)
    # A-2-3 laid beside 4-5-6 is secured; the 4-5-6 is not (7 is still out).
    low = prop("AH 2H 3H", RUN, pid="p1")
    high = prop("4H 5H 6H", RUN, pid="p2")
    assert secured(low, high) and not secured(high, low)
    # A three of a kind whose fourth card sits in a sequence.
    assert secured(prop("7C 7D 7S", SET, pid="p1"), prop("6H 7H 8H", RUN, pid="p2"))


def test_secured_with_two_decks() -> None:
    four = prop("7C 7D 7H 7S", SET)
    assert not secured(four, rules=TWO)
    assert secured(four, rules=TWO_DISTINCT)
    run = prop("4H 5H 6H", RUN, pid="p1")
    one_seven = prop("7H 8H 9H", RUN, pid="p2")
    other_seven = prop("7H 7C 7D", SET, pid="p3")
    threes = prop("3H 3C 3D", SET, pid="p4")
    more_threes = prop("AH 2H 3H", RUN, pid="p5")
    assert not secured(run, one_seven, threes, more_threes, rules=TWO)
    assert secured(run, one_seven, other_seven, threes, more_threes, rules=TWO)


@pytest.mark.parametrize(
    ("pile", "depth"),
    [
        ("", 0),
        ("KC", 1),
        ("2S 4S 5S", 3),  # 5 on top, then 4, then 2: one suit, distinct ranks
        ("5S 2S 4S", 3),
        ("9D 5S 5H", 2),  # one rank
        ("5H 5S 5H", 3),
        ("5S 5H 6H", 2),  # 6H+5H by suit; 5S then breaks the suit
        ("7C 5H 5S 5D", 3),
        ("4H 5H 6S 7S 7H", 2),  # 7H,7S by rank (2) beats 7H alone by suit
        ("3C 3H 5H 3H", 2),  # a repeated rank stops a suit run
        ("JC 10C", 2),
    ],
)
def test_ajar_depth(pile: str, depth: int) -> None:
    assert ajar_depth(pile.split()) == depth
