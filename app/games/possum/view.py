"""What one seat of a Possum game may see: its own hand, everyone's counts,
the top card of the discard pile (the cards under it are not shown), the size
of the draw pile and how the current turn stands."""

from __future__ import annotations

from app.games.base import Game, View
from app.games.possum.model import PossumState
from app.games.possum.patterns import can_play
from app.games.possum.plays import value, value_counts


def build_view(game: Game[PossumState], state: PossumState, seat: int | None) -> View:
    return {**seat_part(game, state, seat), **public_part(game, state)}


def seat_part(game: Game[PossumState], state: PossumState, seat: int | None) -> View:
    """Who the view is for, its hand and whether it can play on the top card."""
    view: View = {"game": game.name, "seat": seat}
    if seat is not None:
        hand = state.hands[seat]
        view["hand"] = list(hand)
        view["can_play"] = can_play(value_counts(hand), value(state.pile[-1]), state.options)
    return view


def public_part(game: Game[PossumState], state: PossumState) -> View:
    """What every seat's view holds alike."""
    opts = state.options
    view: View = {
        "seats": len(state.hands),
        "phase": "over" if state.over else "play",
        "to_act": sorted(game.to_act(state)),
        "turn": state.turn,
        "dealer": state.dealer,
        "counts": [len(h) for h in state.hands],
        "over": state.over,
        "result": game.result(state),
        "top": state.pile[-1],
        "pile_count": len(state.pile),
        "draw_count": len(state.draw),
        "draws_taken": state.draws_taken,
        "draw_limit": state.draw_limit,
        "winner": state.winner,
        "stalled": state.stalled,
        "options": {
            "multiply": opts.multiply,
            "multi": opts.multi,
            "no_face_cards": opts.no_face_cards,
            "single_draw": opts.single_draw,
        },
    }
    if state.over:
        view["hands"] = [list(h) for h in state.hands]
    return view
