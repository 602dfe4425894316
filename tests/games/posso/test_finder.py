"""The go-down finder against a brute-force search, and its answers against the
engine's own checks."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.posso import find_go_down
from app.games.posso.melds import new_meld
from app.games.posso.rules import REQUIREMENTS, RUN

WILDS = ["2C", "2H", "JK"]


def _wild(c: str) -> bool:
    return c == "JK" or c.startswith("2")


def _val(c: str) -> int:
    r = c[:-1]
    return {"A": 14, "J": 11, "Q": 12, "K": 13}.get(r) or int(r)


def ok_set(cards: tuple[str, ...]) -> bool:
    nat = [c for c in cards if not _wild(c)]
    return (
        bool(nat) and len({_val(c) for c in nat}) == 1 and 2 * (len(cards) - len(nat)) <= len(cards)
    )


def run_suit(cards: tuple[str, ...]) -> str | None:
    """The suit if these cards, in some order, make a run; else None."""
    nat = [c for c in cards if not _wild(c)]
    if not nat or len({c[-1] for c in nat}) != 1:
        return None
    vals = sorted(_val(c) for c in nat)
    if len(set(vals)) != len(vals) or 2 * (len(cards) - len(nat)) > len(cards):
        return None
    if vals[-1] - vals[0] + 1 > len(cards) or len(cards) > 12:
        return None
    return nat[0][-1]


def brute(hand: list[str], hand_no: int) -> bool:
    """Exhaustive: every choice of cards for every meld.  A set can only hold one
    rank and wilds, and a run one suit and wilds, so only those are tried."""
    req = REQUIREMENTS[hand_no]
    ordered = tuple(sorted(hand, key=_wild))  # naturals first
    if req.all_cards:
        return _partition(ordered, 3, frozenset())
    return _choose(ordered, list(req.melds), frozenset(), req.distinct_suits)


def _groups(left: tuple[str, ...], kind: str) -> list[list[int]]:
    """Index lists of the cards that could share one meld of `kind`."""
    wild = [i for i, c in enumerate(left) if _wild(c)]
    key = _val if kind == "set" else (lambda c: c[-1])
    keys = {key(c) for c in left if not _wild(c)}
    return [[i for i, c in enumerate(left) if not _wild(c) and key(c) == k] + wild for k in keys]


def _choose(
    left: tuple[str, ...], melds: list[tuple[str, int]], suits: frozenset[str], distinct: bool
) -> bool:
    if not melds:
        return True
    (kind, size), rest = melds[0], melds[1:]
    seen: set[tuple[str, ...]] = set()
    for group in _groups(left, kind):
        for idx in combinations(group, size):
            pick = tuple(sorted(left[i] for i in idx))
            if pick in seen:
                continue
            seen.add(pick)
            remain = tuple(c for i, c in enumerate(left) if i not in idx)
            if kind == "set":
                if ok_set(pick) and _choose(remain, rest, suits, distinct):
                    return True
                continue
            suit = run_suit(pick)
            if suit is None or (distinct and suit in suits):
                continue
            if _choose(remain, rest, suits | {suit}, distinct):
                return True
    return False


def _partition(left: tuple[str, ...], runs: int, suits: frozenset[str]) -> bool:
    """Can `left` (naturals first) be split exactly into `runs` runs of 5+ in new suits?"""
    if runs == 0:
        return not left
    if len(left) < 5 * runs or _wild(left[0]):
        return False  # too few cards, or a run with no natural at all
    first = left[0]
    others = [i for i in range(1, len(left)) if _wild(left[i]) or left[i][-1] == first[-1]]
    most = len(left) - 5 * (runs - 1)
    seen: set[tuple[str, ...]] = set()
    for size in range(5, min(most, 12) + 1):
        for idx in combinations(others, size - 1):
            pick = tuple(sorted((first, *(left[i] for i in idx))))
            if pick in seen:
                continue
            seen.add(pick)
            suit = run_suit(pick)
            if suit is None or suit in suits:
                continue
            remain = tuple(c for i, c in enumerate(left) if i and i not in idx)
            if _partition(remain, runs - 1, suits | {suit}):
                return True
    return False


def check_plan(hand: list[str], hand_no: int, plan: list[dict[str, Any]]) -> None:
    """The finder's melds pass the engine's own checks for going down."""
    req = REQUIREMENTS[hand_no]
    used = Counter(c for m in plan for c in m["cards"])
    assert not used - Counter(hand), "the plan uses cards the hand lacks"
    melds = [new_meld("m", 0, m["kind"], m["cards"]) for m in plan]
    shapes = sorted((m.kind, len(m.cards)) for m in melds)
    if req.all_cards:
        assert used == Counter(hand) and len(melds) == 3
        assert all(k == RUN and n >= 5 for k, n in shapes)
    else:
        assert shapes == sorted(req.melds)
    suits = [m.suit for m in melds if m.kind == RUN]
    if req.distinct_suits:
        assert len(set(suits)) == len(suits)


NAMES = {11: "J", 12: "Q", 13: "K", 14: "A"}
ANY_CARD = [NAMES.get(v, str(v)) + s for v in range(3, 15) for s in "CDHS"] + WILDS


@st.composite
def near_solutions(draw: st.DrawFn, hand_no: int) -> list[str]:
    """A laid-out requirement (runs in distinct suits, a few wilds), plus stray
    cards, then maybe a card or two changed: solvable and near-miss hands alike."""
    req = REQUIREMENTS[hand_no]
    suits = draw(st.permutations("CDHS"))
    cards: list[str] = []
    runs = 0
    for kind, size in req.melds:
        if kind == "run":
            n = size if not req.all_cards else draw(st.integers(size, size + 2))
            low = draw(st.integers(3, 15 - n))
            meld = [NAMES.get(v, str(v)) + suits[runs] for v in range(low, low + n)]
            runs += 1
        else:
            v = draw(st.integers(3, 14))
            meld = [NAMES.get(v, str(v)) + draw(st.sampled_from("CDHS")) for _ in range(size)]
        for i in draw(st.lists(st.integers(0, size - 1), max_size=size // 2, unique=True)):
            meld[i] = draw(st.sampled_from(WILDS))
        cards += meld
    if not req.all_cards:
        cards += draw(st.lists(st.sampled_from(ANY_CARD), max_size=2 if hand_no >= 8 else 3))
    for _ in range(draw(st.integers(0, 2))):
        cards[draw(st.integers(0, len(cards) - 1))] = draw(st.sampled_from(ANY_CARD))
    return draw(st.permutations(cards))


hands = st.integers(min_value=1, max_value=9).flatmap(
    lambda k: st.tuples(st.just(k), near_solutions(k))
)


@settings(max_examples=250)
@given(hands)
def test_finder_agrees_with_brute_force(case: tuple[int, list[str]]) -> None:
    hand_no, hand = case
    plan = find_go_down(hand, hand_no)
    assert (plan is not None) == brute(hand, hand_no), (hand_no, hand, plan)
    if plan is not None:
        check_plan(hand, hand_no, plan)


@settings(max_examples=120)
@given(near_solutions(10))
def test_hand_ten_finder_agrees_with_brute_force(hand: list[str]) -> None:
    plan = find_go_down(hand, 10)
    assert (plan is not None) == brute(hand, 10), (hand, plan)
    if plan is not None:
        check_plan(hand, 10, plan)


def test_finder_uses_a_natural_in_a_set_and_a_wild_in_its_run_when_it_must() -> None:
    # the sevens need 7H (two wilds would be too many in a set of three),
    # so the run 5H..8H must stand a wild in 7H's place
    hand = ["5H", "6H", "7H", "8H", "7C", "JK", "2C"]
    plan = find_go_down(hand, 2)
    assert plan is not None
    check_plan(hand, 2, plan)
    group = next(m["cards"] for m in plan if m["kind"] == "set")
    run = next(m["cards"] for m in plan if m["kind"] == "run")
    assert {"7C", "7H"} <= set(group) and run[0] == "5H" and run[2] in ("JK", "2C")


def test_finder_handles_a_long_hand_ten_and_big_hands() -> None:
    hearts = ["3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", "AH"]
    clubs = ["3C", "4C", "5C", "2D", "JK"]
    diamonds = ["6D", "7D", "8D", "9D", "10D"]
    seventeen = [*hearts[:7], *clubs, *diamonds]
    assert find_go_down(seventeen, 10) is not None
    assert find_go_down([*hearts[:7], *clubs, *diamonds[:4], "KH"], 10) is None
    twenty_two = [*hearts, "3C", "4C", "5C", "6C", "7C", *diamonds]
    plan = find_go_down(twenty_two, 10)
    assert plan is not None and sorted(len(m["cards"]) for m in plan) == [5, 5, 12]
    check_plan(twenty_two, 10, plan)
    big = [f"{r}{s}" for r in ("3", "4", "5", "6", "7", "8", "9", "10") for s in "CDHS"] * 2
    for k in range(1, 10):
        found = find_go_down(big, k)
        assert found is not None
        check_plan(big, k, found)
    assert find_go_down(["3H", "5C", "7D", "9S", "JH", "KC", "AD"], 1) is None


def test_finder_refuses_an_unknown_hand() -> None:
    with pytest.raises(ValueError, match="hand 11"):
        find_go_down(["3H"], 11)
