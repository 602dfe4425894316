"""The move lister against a brute-force search through `apply`: it must list
every put-down `apply` accepts, and nothing it refuses."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import Any

import pytest

from app.games.base import IllegalAction
from app.games.possession.combos import ajar_depth
from app.games.possession.model import PossessionState
from tests.games.possession.driver import random_game
from tests.games.possession.helpers import G

Key = tuple[Any, ...]


def key(action: dict[str, Any]) -> Key:
    t = action["type"]
    if t == "meld":
        return (t, tuple(sorted(action["cards"])), action.get("from_pile", 0))
    if t == "extend":
        return (t, action["property"], tuple(sorted(action["cards"])))
    return (t, action.get("card"), action.get("source"))


def sub_multisets(hand: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    seen: set[tuple[str, ...]] = set()
    for size in range(1, len(hand) + 1):
        for combo in combinations(hand, size):
            if combo not in seen:
                seen.add(combo)
                yield combo


def brute_force(state: PossessionState, seat: int) -> set[Key]:
    accepted: set[Key] = set()

    def attempt(action: dict[str, Any]) -> None:
        try:
            G.apply(state, seat, action)
        except IllegalAction:
            return
        accepted.add(key(action))

    for c in set(state.hands[seat]):
        attempt({"type": "discard", "card": c})
    attempt({"type": "keep"})
    attempt({"type": "fold"})
    deepest = min(len(state.pile), ajar_depth(state.pile) + 1)
    for sub in sub_multisets(state.hands[seat]):
        cards = list(sub)
        for k in range(deepest + 1):
            attempt({"type": "meld", "cards": cards, "from_pile": k})
        for p in state.properties:
            attempt({"type": "extend", "property": p.id, "cards": cards})
    return accepted


def positions(seats: int, options: dict[str, Any], seed: int, every: int) -> list[PossessionState]:
    out = []
    for i, (before, _seat, _action, _after, _events) in enumerate(
        random_game(seats, options, seed)
    ):
        putting_down = before.phase == "showdown" or before.drawn
        if putting_down and (i % every == 0 or before.phase == "showdown"):
            out.append(before)
    return out


@pytest.mark.parametrize(
    ("seats", "options", "seed"),
    [
        (2, {}, 1),
        (3, {}, 2),
        (4, {}, 3),
        (4, {"distinct_suit_sets": True}, 4),
        (2, {"open_pile": True}, 5),
    ],
)
def test_legal_actions_are_exactly_what_apply_accepts(
    seats: int, options: dict[str, Any], seed: int
) -> None:
    checked = 0
    for state in positions(seats, options, seed, every=9)[:12]:
        seat = state.turn
        assert seat is not None
        listed = [key(a) for a in G.legal_actions(state, seat)]
        assert len(listed) == len(set(listed)), "an action is listed twice"
        assert set(listed) == brute_force(state, seat)
        checked += 1
    assert checked >= 5
