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
        held = state.hands[seat]
        if type(raw) is list and len(raw) == 1 and type(raw[0]) is str and raw[0] in held:
            return (raw[0],)  # most plays: one card, which the seat holds
        chosen = read_cards(raw, jokers=False)
        if len(set(chosen)) != len(chosen):
            raise IllegalAction("duplicate_card", "a card is named more than once")
        check_held(held, chosen)
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
        played = Trick(chosen, seat, combo)
        if hand:  # most plays: the seat keeps cards, so two or more still hold some
            passed = state.passed if state.options.pass_locks else _NOBODY
            nxt = _next_holder(hands, seat, passed)
            if nxt != seat:
                return _after_play(state, hands, places, nxt, played, passed, played), events
            # everyone else is locked out by an earlier pass
            events.append(event("control", seat=seat, reason="all_passed"))
            return _after_play(state, hands, places, seat, None, _NOBODY, played), events
        places = (*places, seat)
        events.append(event("went_out", seat=seat, place=len(places)))
        holders = [s for s in range(SEATS) if hands[s]]
        if len(holders) == 1:
            places = (*places, holders[0])
            final = _after_play(state, hands, places, None, None, _NOBODY, played)
            events.append(event("game_over", result=self.result(final), hands=_shown(final)))
            return final, events
        nxt = _next_holder(hands, seat, _NOBODY)
        events.append(event("control", seat=nxt, reason="went_out"))
        return _after_play(state, hands, places, nxt, None, _NOBODY, played), events

    def _pass(self, state: BigTwoState, seat: int) -> tuple[BigTwoState, list[Event]]:
        trick = state.trick
        if trick is None:
            raise IllegalAction("cannot_pass", "you have control: lead any combination")
        passed = state.passed | {seat}
        events: list[Event] = [{"type": "passed", "to": None, "seat": seat}]  # event("passed")
        skip = passed if state.options.pass_locks else _NOBODY
        nxt = _next_holder(state.hands, seat, skip)
        if nxt == trick.seat:
            events.append(event("control", seat=nxt, reason="all_passed"))
            trick, passed = None, _NOBODY
        # the state with the turn moved on (named tuple fields, in order)
        return BigTwoState(
            state.options,
            state.seed,
            state.dealt_first,
            state.hands,
            nxt,
            trick,
            passed,
            state.places,
            state.first_play,
            state.played,
            state.last_play,
        ), events


#: nobody passed (one set for all states: they never change)
_NOBODY: frozenset[int] = frozenset()


def _after_play(
    state: BigTwoState,
    hands: tuple[tuple[str, ...], ...],
    places: tuple[int, ...],
    turn: int | None,
    trick: Trick | None,
    passed: frozenset[int],
    played: Trick,
) -> BigTwoState:
    """The state after `played` (now the last play): named tuple fields, in order."""
    return BigTwoState(
        state.options,
        state.seed,
        state.dealt_first,
        hands,
        turn,
        trick,
        passed,
        places,
        False,
        state.played + played.cards,
        played,
    )


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
