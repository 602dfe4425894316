"""Rebuilding a stored game step by step through its engine.

A replay is the seed and the action log fed back through `new_game` and
`apply`, exactly as the room played it, so it shows what the players saw and
cannot disagree with the stored log.  What each step shows depends on who asks
(see `Perspective`): every seat's view once a finished game is opened by one
of its players, only the asker's own seats while it is running, the
spectator's view otherwise.  Events are filtered the same way as the room
filters them: an event addressed to a seat appears only where that seat's
view does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from app.games import GAMES, IllegalAction

Kind = Literal["full", "seats", "spectator"]


@dataclass(frozen=True)
class Perspective:
    kind: Kind
    seats: frozenset[int] = field(default_factory=frozenset)

    def view_keys(self, n_seats: int) -> list[int | None]:
        if self.kind == "full":
            return [*range(n_seats)]
        if self.kind == "seats":
            return [*sorted(self.seats)]
        return [None]

    def may_see(self, to: Any, n_seats: int) -> bool:
        if to is None:
            return True
        return to in self.view_keys(n_seats)


class ReplayError(Exception):
    """The stored log no longer replays (an engine changed its rules, or the
    game's engine is not installed)."""


def _key(seat: int | None) -> str:
    return "spectator" if seat is None else str(seat)


def replay(
    game: str,
    options: dict[str, Any],
    seed: int,
    n_seats: int,
    actions: Sequence[tuple[int | None, dict[str, Any]]],
    perspective: Perspective,
    *,
    start: int = 0,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Steps `start .. start+limit` of the replay.  Step 0 is the deal; step k
    is the state after action k-1.  Each step: the action that led to it (and
    its seat), the events it produced that this perspective may see, and the
    views keyed by seat ("0", "1", ... or "spectator")."""
    engine = GAMES.get(game)
    if engine is None:
        raise ReplayError(f"this server has no {game!r} engine to replay the game with")
    try:
        state = engine.new_game(n_seats, engine.stored_options(options), seed)
    except ValueError as err:
        raise ReplayError(f"the game cannot be dealt again: {err}") from None
    stop = len(actions) + 1 if limit is None else min(len(actions) + 1, start + limit)
    keys = perspective.view_keys(n_seats)
    steps: list[dict[str, Any]] = []

    def emit(step: int, seat: int | None, action: dict[str, Any] | None, events: list[Any]) -> None:
        steps.append(
            {
                "step": step,
                "seat": seat,
                "action": action,
                "events": [e for e in events if perspective.may_see(e.get("to"), n_seats)],
                "views": {_key(k): engine.view(state, k) for k in keys},
            }
        )

    if start == 0:
        emit(0, None, None, [])
    for i, (seat, action) in enumerate(actions[: max(0, stop - 1)]):
        try:
            state, events = engine.apply(state, seat, action)
        except IllegalAction as err:
            raise ReplayError(
                f"action {i} ({action.get('type')!r} from seat {seat}) no longer replays: "
                f"{err.message}"
            ) from None
        if i + 1 >= start:
            emit(i + 1, seat, action, events)
    return steps
