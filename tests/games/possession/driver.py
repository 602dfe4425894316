"""A random driver that seeks out property moves, so random games reach the
positions worth checking (many properties, steals, showdowns, open season)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from app.games.base import Event
from app.games.possession.model import PossessionState
from tests.games.possession.helpers import G


def greedy_random_action(state: PossessionState, rng: random.Random) -> tuple[int, dict[str, Any]]:
    seat = state.turn
    assert seat is not None
    legal = G.legal_actions(state, seat)
    moves = [a for a in legal if a["type"] in ("meld", "extend")]
    if moves and rng.random() < 0.6:
        return seat, rng.choice(moves)
    if state.phase == "showdown" and moves and rng.random() < 0.8:
        return seat, rng.choice(moves)
    return seat, rng.choice(legal)


def random_game(
    seats: int, options: dict[str, Any], seed: int
) -> Iterator[tuple[PossessionState, int, dict[str, Any], PossessionState, list[Event]]]:
    """Yield (before, seat, action, after, events) for each step of one game."""
    rng = random.Random(seed)
    state = G.new_game(seats, options, seed)
    for _ in range(5000):
        if G.is_over(state):
            return
        seat, action = greedy_random_action(state, rng)
        after, events = G.apply(state, seat, action)
        yield state, seat, action, after, events
        state = after
    raise AssertionError("game did not end")
