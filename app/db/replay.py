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

from app.games import GAMES, Game, IllegalAction

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


def _deal(game: str, options: dict[str, Any], seed: int, n_seats: int) -> tuple[Game[Any], Any]:
    """The stored game's engine and its first deal, as the room dealt it."""
    engine = GAMES.get(game)
    if engine is None:
        raise ReplayError(f"this server has no {game!r} engine to replay the game with")
    try:
        return engine, engine.new_game(n_seats, engine.stored_options(options), seed)
    except ValueError as err:
        raise ReplayError(f"the game cannot be dealt again: {err}") from None


def _apply(
    engine: Game[Any], state: Any, i: int, seat: int | None, action: dict[str, Any]
) -> tuple[Any, list[dict[str, Any]]]:
    """Action `i` of the log applied, or why it no longer can be."""
    try:
        return engine.apply(state, seat, action)
    except IllegalAction as err:
        raise ReplayError(
            f"action {i} ({action.get('type')!r} from seat {seat}) no longer replays: {err.message}"
        ) from None


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
    engine, state = _deal(game, options, seed, n_seats)
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
        state, events = _apply(engine, state, i, seat, action)
        if i + 1 >= start:
            emit(i + 1, seat, action, events)
    return steps


#: what a replay can jump through, per game: Posso's hands, Big Two's tricks,
#: and for the games with neither, rounds (every seat's turn once)
UNITS = {"posso": "hand", "bigtwo": "trick"}


def chapters(
    game: str,
    options: dict[str, Any],
    seed: int,
    n_seats: int,
    actions: Sequence[tuple[int | None, dict[str, Any]]],
) -> dict[str, Any]:
    """Where each hand, trick or round of a stored game begins:
    `{"unit": "hand", "marks": [{"n": 8, "step": 0}, {"n": 9, "step": 311}, ...]}`,
    so a replay can jump to any of them without fetching the steps between.
    Found from what the table saw (public events, whose turn it is), never
    from a hand: the same for every asker.  The log is walked once, without
    building a view."""
    engine, state = _deal(game, options, seed, n_seats)
    unit = UNITS.get(game, "round")
    if unit == "hand":
        first = engine.view(state, None).get("hand_no")
        start = first if isinstance(first, int) else 1
    else:
        start = 1
    marks = [{"n": start, "step": 0}]
    opener = min(engine.to_act(state), default=0)  # a round begins at this seat's turn
    last = 0  # where in the round the seat that acted last sits
    for i, (seat, action) in enumerate(actions):
        state, events = _apply(engine, state, i, seat, action)
        if engine.is_over(state):
            break
        if unit == "hand":
            for e in events:
                hand = e.get("hand")
                if e["type"] in ("cut_due", "hand_started") and hand == marks[-1]["n"] + 1:
                    marks.append({"n": hand, "step": i + 1})
        elif unit == "trick":
            if any(e["type"] == "control" for e in events):
                marks.append({"n": marks[-1]["n"] + 1, "step": i + 1})
        elif seat is not None:
            last = (seat - opener) % n_seats
            nxt = engine.to_act(state)
            # the turn passes back round the table (a seat going on with its
            # own turn - Possum's draws - stays in the round)
            if len(nxt) == 1 and seat not in nxt and (min(nxt) - opener) % n_seats <= last:
                marks.append({"n": marks[-1]["n"] + 1, "step": i + 1})
    return {"unit": unit, "marks": marks}
