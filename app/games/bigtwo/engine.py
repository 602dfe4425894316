"""Big Two (Pusoy Dos) for exactly four seats, behind the engine contract.

Turn flow, as docs/games/bigtwo.md (Rulings) settles it:
- the holder of 3C leads first and must include it;
- a seat with a combination on the table plays a higher one of the same size,
  or passes;
- the player whose play everyone else still holding cards passed on takes
  control (the table is cleared and they lead anything, no passing);
- when a play empties a hand, the next seat still holding cards takes control;
- with `pass_locks`, a seat that passed is skipped until someone takes control;
- the game ends when one seat holds cards; places are the order of going out.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from app.games import cards
from app.games.base import (
    Action,
    Event,
    Game,
    IllegalAction,
    Shapes,
    View,
    check_held,
    event,
    read_action,
    read_cards,
)
from app.games.bigtwo.combos import ARTICLE, SIZE_NAME, Combo, classify
from app.games.bigtwo.model import BigTwoOptions, BigTwoState, Trick
from app.games.bigtwo.order import DECK, THREE_OF_CLUBS, by_power
from app.games.bigtwo.plays import all_plays, plays_beating
from app.games.bigtwo.view import build_view, public_part, seat_part
from app.games.cards import cards_text

SEATS = 4
HAND_SIZE = 13
PASS: Action = {"type": "pass"}
#: a spectator's own part never changes (seat_view_key)
_NO_SEAT = object()

#: action type -> (required fields, optional fields); timeout is known but refused.
SHAPES: Shapes = {
    "play": (frozenset({"cards"}), frozenset()),
    "pass": (frozenset(), frozenset()),
    "timeout": (frozenset(), frozenset()),
}


class BigTwoGame(Game[BigTwoState]):
    name: ClassVar[str] = "bigtwo"
    title: ClassVar[str] = "Big Two"
    min_seats: ClassVar[int] = SEATS
    max_seats: ClassVar[int] = SEATS
    Options: ClassVar[type[BigTwoOptions]] = BigTwoOptions

    def __init__(self) -> None:
        #: the last state whose public view was built, and that view (view.py)
        self.public_memo: tuple[BigTwoState, View] | None = None

    # -- setting up -------------------------------------------------------

    def new_game(
        self, seats: int, options: dict[str, Any], seed: int, deck: list[str] | None = None
    ) -> BigTwoState:
        self.check_seats(seats)
        opts = self.parse_options(options)
        assert isinstance(opts, BigTwoOptions)
        dealer = self.choose_dealer(SEATS, seed, opts.first_dealer)
        order = cards.stacked(DECK, deck, cards.rng_for(seed, "deal", 1))
        dealt = cards.deal_clockwise(order, SEATS, dealer, HAND_SIZE)
        leader = next(s for s in range(SEATS) if THREE_OF_CLUBS in dealt[s])
        return BigTwoState(
            options=opts,
            seed=seed,
            dealt_first=(dealer + 1) % SEATS,
            hands=tuple(tuple(by_power(h)) for h in dealt),
            turn=leader,
            trick=None,
            passed=frozenset(),
            places=(),
            first_play=True,
            played=(),
        )

    # -- asking -------------------------------------------------------------

    def to_act(self, state: BigTwoState) -> set[int]:
        return set() if state.turn is None else {state.turn}

    def legal_actions(self, state: BigTwoState, seat: int) -> list[Action]:
        if state.turn is None or seat != state.turn:
            return []
        hand = state.hands[seat]
        if state.trick is None:
            plays = all_plays(hand)
            if state.first_play:
                plays = [p for p in plays if THREE_OF_CLUBS in p[1]]
            return [{"type": "play", "cards": list(p[1])} for p in plays]
        out: list[Action] = [
            {"type": "play", "cards": list(p[1])} for p in plays_beating(hand, state.trick.combo)
        ]
        out.append(dict(PASS))
        return out

    def view(self, state: BigTwoState, seat: int | None) -> View:
        return build_view(self, state, seat)

    def public_view(self, state: BigTwoState) -> View:
        return public_part(self, state)

    def seat_view(self, state: BigTwoState, seat: int | None) -> View:
        return seat_part(self, state, seat)

    def seat_view_key(self, state: BigTwoState, seat: int | None) -> object:
        # a seat's own part is its hand (and whose it is): a move replaces only
        # the mover's hand tuple and shares the others with the new state
        return _NO_SEAT if seat is None else state.hands[seat]

    def result(self, state: BigTwoState) -> dict[str, Any] | None:
        if not state.over:
            return None
        scores = [0] * SEATS
        for place, seat in enumerate(state.places, start=1):
            scores[seat] = place
        return {"places": [[s] for s in state.places], "scores": scores}

    def all_cards(self, state: BigTwoState) -> list[str]:
        return [c for hand in state.hands for c in hand] + list(state.played)

    # -- acting -------------------------------------------------------------

    def apply(
        self, state: BigTwoState, seat: int | None, action: Action
    ) -> tuple[BigTwoState, list[Event]]:
        kind = read_action(action, SHAPES, self.title)
        if kind == "timeout":
            raise IllegalAction("no_timer", "Big Two has no timer to run out")
        if state.over:
            raise IllegalAction("game_over", "the game is over")
        if type(seat) is not int or seat != state.turn:  # not None, a bool or a float
            raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
        if kind == "pass":
            return self._pass(state, seat)
        chosen = self._checked_cards(state, seat, action["cards"])
        combo = self._checked_combo(state, chosen)
        return self._play(state, seat, chosen, combo)

    def _checked_cards(self, state: BigTwoState, seat: int, raw: object) -> tuple[str, ...]:
        chosen = read_cards(raw, jokers=False)
        if len(set(chosen)) != len(chosen):
            raise IllegalAction("duplicate_card", "a card is named more than once")
        check_held(state.hands[seat], chosen)
        return tuple(chosen)

    def _checked_combo(self, state: BigTwoState, chosen: tuple[str, ...]) -> Combo:
        n = len(chosen)
        if n == 4:
            raise IllegalAction(
                "four_cards",
                "Big Two has no 4-card plays: play 1, 2, 3 or 5 cards "
                "(four of a kind is played with any fifth card)",
            )
        if n not in (1, 2, 3, 5):
            raise IllegalAction("bad_size", f"a play is 1, 2, 3 or 5 cards, not {n}")
        combo = classify(chosen)
        if combo is None:
            what = SIZE_NAME[n] if n < 5 else "a straight, flush, full house, four of a kind"
            raise IllegalAction("not_a_combination", f"{cards_text(chosen)} is not {what}")
        if state.first_play and THREE_OF_CLUBS not in chosen:
            raise IllegalAction("must_include_3c", "the first play of the game must include 3♣")
        trick = state.trick
        if trick is not None:
            if combo.size != trick.combo.size:
                raise IllegalAction(
                    "wrong_size",
                    f"the table holds {SIZE_NAME[trick.combo.size]}: play "
                    f"{SIZE_NAME[trick.combo.size]} that beats it, or pass",
                )
            if not combo.beats(trick.combo):
                raise IllegalAction(
                    "too_low",
                    f"{ARTICLE[combo.category]} {cards_text(chosen)} does not beat "
                    f"{ARTICLE[trick.combo.category]} {cards_text(trick.cards)}",
                )
        return combo

    def _play(
        self, state: BigTwoState, seat: int, chosen: tuple[str, ...], combo: Combo
    ) -> tuple[BigTwoState, list[Event]]:
        held = state.hands[seat]
        if len(chosen) == 1:  # most plays: one card out of the hand
            at = held.index(chosen[0])
            hand = held[:at] + held[at + 1 :]
        else:
            gone = set(chosen)
            hand = tuple(c for c in held if c not in gone)
        hands = (*state.hands[:seat], hand, *state.hands[seat + 1 :])
        # event("played", ...) written out: the one event of most moves
        played_event: Event = {
            "type": "played",
            "to": None,
            "seat": seat,
            "cards": list(chosen),
            "category": combo.category,
            "left": len(hand),
        }
        events = [played_event]
        places = state.places
        # a seat that keeps cards leaves at least two holders (the state was not over)
        holders: list[int] = []
        if not hand:
            places = (*places, seat)
            events.append(event("went_out", seat=seat, place=len(places)))
            holders = [s for s in range(SEATS) if hands[s]]
        played = _trick(chosen, seat, combo)
        base = {
            "hands": hands,
            "played": state.played + chosen,
            "first_play": False,
            "last_play": played,
        }
        if len(holders) == 1:
            places = (*places, holders[0])
            final = _replace(
                state, **base, places=places, turn=None, trick=None, passed=frozenset()
            )
            events.append(event("game_over", result=self.result(final), hands=_shown(final)))
            return final, events
        trick = played
        if not hand:
            nxt = _next_holder(hands, seat, frozenset())
            events.append(event("control", seat=nxt, reason="went_out"))
            return _replace(
                state, **base, places=places, turn=nxt, trick=None, passed=frozenset()
            ), events
        passed = state.passed if state.options.pass_locks else frozenset()
        nxt = _next_holder(hands, seat, passed)
        if nxt == seat:  # everyone else is locked out by an earlier pass
            events.append(event("control", seat=seat, reason="all_passed"))
            return _replace(
                state, **base, places=places, turn=seat, trick=None, passed=frozenset()
            ), events
        return _replace(state, **base, places=places, turn=nxt, trick=trick, passed=passed), events

    def _pass(self, state: BigTwoState, seat: int) -> tuple[BigTwoState, list[Event]]:
        trick = state.trick
        if trick is None:
            raise IllegalAction("cannot_pass", "you have control: lead any combination")
        passed = state.passed | {seat}
        events: list[Event] = [{"type": "passed", "to": None, "seat": seat}]  # event("passed")
        skip = passed if state.options.pass_locks else frozenset()
        nxt = _next_holder(state.hands, seat, skip)
        if nxt == trick.seat:
            events.append(event("control", seat=nxt, reason="all_passed"))
            return _replace(state, turn=nxt, trick=None, passed=frozenset()), events
        return _replace(state, turn=nxt, passed=passed), events


def _replace(state: BigTwoState, **changes: Any) -> BigTwoState:
    """`dataclasses.replace`, without its cost: that runs `__init__`, which sets
    each field through `object.__setattr__`, a third of the time `apply` took.
    Copying the instance's fields is as safe, since every one is immutable."""
    assert changes.keys() <= _FIELDS, changes.keys() - _FIELDS
    new = object.__new__(BigTwoState)
    fields = new.__dict__
    fields.update(state.__dict__)
    fields.update(changes)
    return new


_FIELDS = frozenset(f.name for f in dataclasses.fields(BigTwoState))


def _trick(cards: tuple[str, ...], seat: int, combo: Combo) -> Trick:
    """`Trick(cards, seat, combo)`, made the way `_replace` makes a state: a
    frozen dataclass's `__init__` sets each field through `object.__setattr__`."""
    new = object.__new__(Trick)
    new.__dict__.update(cards=cards, seat=seat, combo=combo)
    return new


def _next_holder(hands: tuple[tuple[str, ...], ...], seat: int, skip: frozenset[int]) -> int:
    """The next seat clockwise after `seat` that holds cards and is not skipped;
    `seat` itself when there is none."""
    for step in range(1, SEATS + 1):
        s = (seat + step) % SEATS
        if hands[s] and s not in skip:
            return s
    return seat


def _shown(state: BigTwoState) -> list[list[str]]:
    return [list(h) for h in state.hands]
