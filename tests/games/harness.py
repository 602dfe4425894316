"""Random play through the engine contract alone, as OpenSpiel's API tests do.

`play_random` drives any registered game with nothing but `to_act`,
`legal_actions` and `apply` (plus `timeout` from seat None when the game waits on
a room timer), checking after every step the invariants every engine owes:

- every seat in `to_act` has at least one legal action, and others have none;
- every listed legal action is accepted by `apply`;
- `apply` never mutates its input, and a refused action raises IllegalAction
  (never anything else);
- a per-game `check(state)` hook holds (card conservation, no leaks, ...);
- `public_view` and `seat_view` split each seat's `view` without adding or
  dropping a key (a room encodes the public part once per state);
- a seat whose `seat_view_key` a move leaves the same object has the same
  `seat_view` after it (a room encodes its part again only on a new key).

States must support `==` and `copy.deepcopy` (dataclasses do).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from app.games.base import Game, IllegalAction

#: actions that are wrong in almost every position of every game
JUNK_ACTIONS: list[dict[str, Any]] = [
    {},
    {"type": "nope"},
    {"type": "discard", "card": "11H"},
    {"type": "play", "cards": ["ZZ"]},
    {"type": "play", "cards": "AS"},
    {"type": "draw", "source": "nowhere"},
    {"type": "timeout"},
]


def assert_refused(game: Game[Any], state: Any, seat: int | None, action: Any) -> str:
    """Apply an action that must be refused; check nothing changed; return the code."""
    before = copy.deepcopy(state)
    try:
        game.apply(state, seat, action)
    except IllegalAction as err:
        assert err.code and err.message, "IllegalAction needs a code and a message"
        assert state == before, f"refused {action!r} changed the state"
        return err.code
    raise AssertionError(f"{action!r} from seat {seat} was accepted")


def assert_view_parts(game: Game[Any], state: Any, seats: int) -> None:
    """Each seat's (and a spectator's) view, told in two parts, is its view."""
    public = game.public_view(state)
    for seat in [*range(seats), None]:
        own = game.seat_view(state, seat)
        assert own.get("seat", "missing") == seat, "a seat's own part names its seat"
        if public is None:
            assert own == game.view(state, seat)
            continue
        assert not own.keys() & public.keys(), f"seat {seat}: keys in both parts"
        assert {**own, **public} == game.view(state, seat), f"seat {seat}: parts != view"


def assert_seat_keys(game: Game[Any], before: Any, after: Any, seats: int) -> None:
    """A seat's own part kept from `before` (its key is the same object) is
    still its own part in `after`."""
    for seat in [*range(seats), None]:
        if game.seat_view_key(before, seat) is game.seat_view_key(after, seat):
            assert game.seat_view(before, seat) == game.seat_view(after, seat), (
                f"seat {seat}: its part changed under the same seat_view_key"
            )


def play_random(
    game: Game[Any],
    seats: int,
    options: dict[str, Any],
    seed: int,
    *,
    rng: random.Random | None = None,
    check: Callable[[Any], None] | None = None,
    max_steps: int = 20_000,
    junk_every: int = 7,
) -> Any:
    """Play one complete game at random; returns the final state."""
    rng = rng or random.Random(seed)
    state = game.new_game(seats, options, seed)
    if check:
        check(state)
    for step in range(max_steps):
        if game.result(state) is not None:
            return state
        acting = game.to_act(state)
        for s in range(seats):
            legal = game.legal_actions(state, s)
            assert bool(legal) == (s in acting), (
                f"seat {s}: in to_act={s in acting} but {len(legal)} legal actions"
            )
        if not acting:
            assert game.timer(state) is not None, "nobody to act, no timer, and not over"
            seat: int | None = None
            action: dict[str, Any] = {"type": "timeout"}
        else:
            seat = rng.choice(sorted(acting))
            action = rng.choice(game.legal_actions(state, seat))
        if step % junk_every == 0:
            assert_view_parts(game, state, seats)
            for junk in JUNK_ACTIONS:
                if junk.get("type") == "timeout" and not acting:
                    continue
                assert_refused(game, state, seat, junk)
            others = [s for s in range(seats) if s not in acting]
            if others:
                bad_seat = rng.choice(others)
                assert_refused(game, state, bad_seat, action)
        before = copy.deepcopy(state)
        new_state, events = game.apply(state, seat, action)
        assert state == before, f"apply mutated its input on {action!r}"
        for ev in events:
            assert "type" in ev and "to" in ev, f"event without type/to: {ev!r}"
            assert ev["to"] is None or 0 <= ev["to"] < seats
        assert_seat_keys(game, state, new_state, seats)
        state = new_state
        if check:
            check(state)
    raise AssertionError(f"game did not end within {max_steps} steps")
