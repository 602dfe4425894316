"""What one seat of a Big Two game may see: its own hand, everyone's counts,
the combination on the table, the public flow of the trick and every card
played so far (each was shown to the whole table when it was played, and a
player at a real table may remember them all)."""

from __future__ import annotations

from typing import Any, Protocol

from app.games.base import View
from app.games.bigtwo.model import BigTwoState, Trick
from app.games.bigtwo.order import THREE_OF_CLUBS


class Rules(Protocol):
    """What a view needs of the engine (engine.py's `BigTwoGame`), named here so
    that the view does not import the engine that imports it."""

    #: the last state whose public view was built, and that view
    public_memo: tuple[BigTwoState, View] | None

    @property
    def name(self) -> str: ...

    def result(self, state: BigTwoState) -> dict[str, Any] | None: ...


def build_view(game: Rules, state: BigTwoState, seat: int | None) -> View:
    """The seat's own part and the public part, merged."""
    return {**seat_part(game, state, seat), **public_part(game, state)}


def seat_part(game: Rules, state: BigTwoState, seat: int | None) -> View:
    """Who the view is for, and its hand."""
    own: View = {"game": game.name, "seat": seat}
    if seat is not None:
        own["hand"] = list(state.hands[seat])
    return own


def public_part(game: Rules, state: BigTwoState) -> View:
    """The public part, built once per state.

    A room asks for every seat's view of each new state in a row, so the
    public part is kept for the last state asked about (`game.public_memo`)
    and shared by those views: a view is read-only to whoever receives it."""
    memo = game.public_memo
    if memo is not None and memo[0] is state:
        return memo[1]
    public = _public(game, state)
    game.public_memo = (state, public)
    return public


def _public(game: Rules, state: BigTwoState) -> View:
    turn = state.turn
    over = turn is None  # state.over
    trick, last = state.trick, state.last_play
    shown = _play(trick)
    view: View = {
        "seats": len(state.hands),
        "phase": "over" if over else "play",
        "to_act": [] if over else [turn],  # one seat acts at a time (engine.to_act)
        "turn": turn,
        "dealer": None,
        "dealt_first": state.dealt_first,
        "counts": list(map(len, state.hands)),
        "over": over,
        "result": game.result(state) if over else None,
        "trick": shown,
        # right after a play, the trick on the table is the last play
        "last_play": shown if last is trick else _play(last),
        "control": not over and trick is None,
        "must_include": THREE_OF_CLUBS if state.first_play else None,
        "passed": sorted(state.passed),
        "places": list(state.places),
        "played_count": len(state.played),
        "played": list(state.played),
        "options": {"pass_locks": state.options.pass_locks},
    }
    if over:
        view["hands"] = [list(h) for h in state.hands]
    return view


def _play(play: Trick | None) -> dict[str, Any] | None:
    if play is None:
        return None
    combo = play.combo
    return {
        "cards": list(play.cards),
        "seat": play.seat,
        "category": combo.category,
        "size": combo.size,
    }
