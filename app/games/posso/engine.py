"""Posso behind the engine contract (app/games/base.py): ten hands of a hypercharged
rummy with begging ("Posso?") between turns, for 2 (with phantoms) to 10."""

from __future__ import annotations

from typing import Any, ClassVar

from app.games.base import Action, Event, Game, IllegalAction, View, read_action
from app.games.posso import actions, flow, legal
from app.games.posso.model import OVER, PossoState, copy_state
from app.games.posso.options import PossoOptions
from app.games.posso.rules import REQUIREMENTS
from app.games.posso.view import public_view, seat_view, view

CARDS_PER_DECK = 54


def decks_needed(seats: int) -> int:
    """Cards hand ten's deal takes: 16 a player, the phantoms' markers, the upturn."""
    phantoms = 2 if seats == 2 else 0
    return REQUIREMENTS[10].deal * seats + phantoms + 1


class PossoGame(Game[PossoState]):
    name: ClassVar[str] = "posso"
    title: ClassVar[str] = "Posso"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 10
    Options: ClassVar[type[PossoOptions]] = PossoOptions

    def stored_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """A game stored before rules versions were recorded was played by the first."""
        return {"rules": 1, **options}

    def new_game(
        self, seats: int, options: dict[str, Any], seed: int, deck: list[str] | None = None
    ) -> PossoState:
        self.check_seats(seats)
        opts = self.parse_options(options)
        assert isinstance(opts, PossoOptions)
        decks = opts.decks if opts.decks is not None else max(2, seats - 1)
        need = decks_needed(seats)
        if decks * CARDS_PER_DECK < need:
            fewest = -(-need // CARDS_PER_DECK)
            raise ValueError(
                f"{decks} deck{'s' if decks != 1 else ''} cannot deal hand ten to {seats} players: "
                f"it needs {need} cards and a deck holds {CARDS_PER_DECK}. Choose {fewest} decks "
                "or more, or leave Decks empty"
            )
        dealer = self.choose_dealer(seats, seed, opts.first_dealer)
        ring: tuple[int | None, ...] = (0, None, 1, None) if seats == 2 else tuple(range(seats))
        state = PossoState(
            seats=seats,
            options=opts,
            seed=seed,
            decks=decks,
            ring=ring,
            hand_no=opts.start_hand,
            dealer=dealer,
            phase="",
            turn=0,
            hands=[],
            markers=[],
            stack=[],
            pile=[],
            totals=[0] * seats,
        )
        flow.start_hand(state, [], deck)
        return state

    def to_act(self, state: PossoState) -> set[int]:
        return legal.to_act(state)

    def legal_actions(self, state: PossoState, seat: int) -> list[Action]:
        return legal.legal_actions(state, seat)

    def timer(self, state: PossoState) -> str | None:
        return legal.timer(state)

    def apply(
        self, state: PossoState, seat: int | None, action: Action
    ) -> tuple[PossoState, list[Event]]:
        kind = read_action(action, actions.FIELDS, self.title)
        if state.phase == OVER:
            raise IllegalAction("game_over", "the game is over")
        events: list[Event] = []
        if kind == "timeout":
            if seat is not None:
                raise IllegalAction("room_only", "only the room sends timeouts")
            running = legal.timer(state)
            if running is None:
                raise IllegalAction("no_timer", "no timer is running")
            new = copy_state(state)
            actions.timeout(new, running, events)
            return new, events
        if seat is None:
            raise IllegalAction("not_your_turn", "spectators cannot act: take a seat first")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.seats:
            raise IllegalAction("bad_seat", f"there is no seat {seat!r} in this game")
        new = copy_state(state)
        actions.HANDLERS[kind](new, seat, action, events)
        return new, events

    def view(self, state: PossoState, seat: int | None) -> View:
        return view(state, seat)

    def public_view(self, state: PossoState) -> View:
        return public_view(state)

    def seat_view(self, state: PossoState, seat: int | None) -> View:
        return seat_view(state, seat)

    def score_rows(self, state: PossoState) -> list[dict[str, Any]]:
        return [flow.copy_row(row) for row in state.sheet]

    def result(self, state: PossoState) -> dict[str, Any] | None:
        return flow.result_of(state)

    def all_cards(self, state: PossoState) -> list[str]:
        out = [c for h in state.hands for c in h]
        out += [c for m in state.markers for c in m]
        out += state.stack + state.pile
        out += [c for m in state.melds for c in m.cards]
        return out
