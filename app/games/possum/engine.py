"""Possum for 2-6 seats, behind the engine contract.

A turn is a play, or up to two draws (one with `single_draw`) each followed by a
play as soon as one exists: you must play if you can.  When the draws are used
up without a play, `apply` ends the turn itself (event `turn_ended`).  A seat
that can neither play nor draw is skipped; when every seat in a row would be,
the game ends stalled.  The draw pile, when empty, is rebuilt from the
discards under the top card, shuffled with the seed.
"""

from __future__ import annotations

from dataclasses import replace
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
from app.games.cards import card_text, cards_text
from app.games.possum.model import PossumOptions, PossumState
from app.games.possum.patterns import can_play, pattern_of
from app.games.possum.plays import hand_key, legal_plays, value, value_counts
from app.games.possum.view import build_view, public_part, seat_part

HAND_SIZE = 6
FACE_RANKS = ("J", "Q", "K")
DRAW: Action = {"type": "draw"}


def full_deck(seats: int, options: PossumOptions) -> list[str]:
    deck = cards.build_deck(2 if seats >= 5 else 1)
    if options.no_face_cards:
        deck = [c for c in deck if cards.rank_text(c) not in FACE_RANKS]
    return deck


#: action type -> (required fields, optional fields); timeout is known but refused.
SHAPES: Shapes = {
    "play": (frozenset({"cards"}), frozenset()),
    "draw": (frozenset(), frozenset()),
    "timeout": (frozenset(), frozenset()),
}


class PossumGame(Game[PossumState]):
    name: ClassVar[str] = "possum"
    title: ClassVar[str] = "Possum"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 6
    Options: ClassVar[type[PossumOptions]] = PossumOptions

    # -- setting up -------------------------------------------------------

    def new_game(
        self, seats: int, options: dict[str, Any], seed: int, deck: list[str] | None = None
    ) -> PossumState:
        self.check_seats(seats)
        opts = self.parse_options(options)
        assert isinstance(opts, PossumOptions)
        dealer = self.choose_dealer(seats, seed, opts.first_dealer)
        order = cards.stacked(full_deck(seats, opts), deck, cards.rng_for(seed, "deal", 1))
        dealt = cards.deal_clockwise(order, seats, dealer, HAND_SIZE)
        upturn = seats * HAND_SIZE
        state = PossumState(
            options=opts,
            seed=seed,
            dealer=dealer,
            hands=tuple(tuple(sorted(h, key=hand_key)) for h in dealt),
            pile=(order[upturn],),
            draw=tuple(order[upturn + 1 :]),
            turn=None,
            draws_taken=0,
            reshuffles=0,
            winner=None,
            stalled=False,
        )
        state, _ = _advance(self, state, dealer)
        return state

    # -- asking -------------------------------------------------------------

    def to_act(self, state: PossumState) -> set[int]:
        return set() if state.turn is None else {state.turn}

    def legal_actions(self, state: PossumState, seat: int) -> list[Action]:
        if state.turn is None or seat != state.turn:
            return []
        plays = legal_plays(state.hands[seat], value(state.pile[-1]), state.options)
        if plays:
            return [{"type": "play", "cards": p} for p in plays]
        return [dict(DRAW)]

    def view(self, state: PossumState, seat: int | None) -> View:
        return build_view(self, state, seat)

    def public_view(self, state: PossumState) -> View:
        return public_part(self, state)

    def seat_view(self, state: PossumState, seat: int | None) -> View:
        return seat_part(self, state, seat)

    def result(self, state: PossumState) -> dict[str, Any] | None:
        if not state.over:
            return None
        scores = [len(h) for h in state.hands]
        totals = [sum(value(c) for c in h) for h in state.hands]
        rest = [s for s in range(len(state.hands)) if s != state.winner]
        rest.sort(key=lambda s: (scores[s], totals[s], s))
        places: list[list[int]] = [] if state.winner is None else [[state.winner]]
        last: tuple[int, int] | None = None
        for s in rest:
            key = (scores[s], totals[s])
            if key == last:
                places[-1].append(s)
            else:
                places.append([s])
                last = key
        return {"places": places, "scores": scores}

    def all_cards(self, state: PossumState) -> list[str]:
        return [c for h in state.hands for c in h] + list(state.pile) + list(state.draw)

    # -- acting -------------------------------------------------------------

    def apply(
        self, state: PossumState, seat: int | None, action: Action
    ) -> tuple[PossumState, list[Event]]:
        kind = read_action(action, SHAPES, self.title)
        if kind == "timeout":
            raise IllegalAction("no_timer", "Possum has no timer to run out")
        if state.over:
            raise IllegalAction("game_over", "the game is over")
        if type(seat) is not int or seat != state.turn:  # not None, a bool or a float
            raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
        if kind == "draw":
            return self._draw(state, seat)
        chosen = self._checked_cards(state, seat, action["cards"])
        pattern = self._checked_pattern(state, chosen)
        return self._play(state, seat, chosen, pattern)

    def _checked_cards(self, state: PossumState, seat: int, raw: object) -> list[str]:
        chosen = read_cards(raw, jokers=False)
        if state.options.no_face_cards:
            for code in chosen:
                if cards.rank_text(code) in FACE_RANKS:
                    raise IllegalAction(
                        "bad_card", f"{card_text(code)}: this game is played without J, Q and K"
                    )
        check_held(state.hands[seat], chosen)
        return chosen

    def _checked_pattern(self, state: PossumState, chosen: list[str]) -> str:
        opts = state.options
        top_code = state.pile[-1]
        top = value(top_code)
        values = [value(c) for c in chosen]
        found = pattern_of(values, top, opts)
        if found is not None:
            return found
        shown = " + ".join(str(v) for v in values)
        if not opts.multiply and pattern_of(
            values, top, opts.model_copy(update={"multiply": True})
        ):
            raise IllegalAction(
                "multiply_off",
                f"{cards_text(chosen)} is a product play: products count only with the "
                "multiply option",
            )
        if not opts.multi and pattern_of(values, top, opts.model_copy(update={"multi": True})):
            raise IllegalAction(
                "multi_off",
                f"{cards_text(chosen)} needs the multi option: without it a play is one card "
                "equal to the top or two cards",
            )
        if len(chosen) == 1:
            raise IllegalAction(
                "not_equal",
                f"{card_text(chosen[0])} ({values[0]}) does not equal the top "
                f"{card_text(top_code)} ({top})",
            )
        limit = 3 if opts.multi else 2
        if len(chosen) > limit:
            raise IllegalAction(
                "too_many_cards",
                f"{len(chosen)} cards: a play of different values is at most {limit} cards",
            )
        raise IllegalAction(
            "sum_wrong",
            f"{shown} = {sum(values)}: the cards must add up to the top "
            f"{card_text(top_code)} ({top}), "
            f"or some of them plus {top} must equal another played card",
        )

    def _play(
        self, state: PossumState, seat: int, chosen: list[str], pattern: str
    ) -> tuple[PossumState, list[Event]]:
        hand = list(state.hands[seat])
        for code in chosen:
            hand.remove(code)
        hands = (*state.hands[:seat], tuple(hand), *state.hands[seat + 1 :])
        new = replace(state, hands=hands, pile=state.pile + tuple(chosen), draws_taken=0)
        events = [
            event(
                "played", seat=seat, cards=chosen, top=chosen[-1], pattern=pattern, left=len(hand)
            )
        ]
        if not hand:
            new = replace(new, turn=None, winner=seat)
            events.append(event("went_out", seat=seat))
            events.append(_game_over(self, new))
            return new, events
        new, more = _advance(self, new, seat)
        return new, events + more

    def _draw(self, state: PossumState, seat: int) -> tuple[PossumState, list[Event]]:
        limit = state.draw_limit
        if state.draws_taken >= limit:
            raise IllegalAction(
                "draw_limit",
                f"you have drawn {limit} card{'s' if limit > 1 else ''} this turn: play",
            )
        top = value(state.pile[-1])
        if can_play(value_counts(state.hands[seat]), top, state.options):
            raise IllegalAction(
                "must_play", "you can play, so you must: drawing is for when you cannot"
            )
        events: list[Event] = []
        if not state.draw:
            state = _reshuffled(state)
            events.append(
                event("reshuffled", draw_count=len(state.draw), reshuffles=state.reshuffles)
            )
        card, rest = state.draw[0], state.draw[1:]
        hand = tuple(sorted((*state.hands[seat], card), key=hand_key))
        hands = (*state.hands[:seat], hand, *state.hands[seat + 1 :])
        taken = state.draws_taken + 1
        new = replace(state, hands=hands, draw=rest, draws_taken=taken)
        events.append(event("drew", seat=seat, draws_taken=taken, draw_count=len(rest)))
        events.append(event("drew_card", to=seat, seat=seat, card=card))
        if can_play(value_counts(hand), top, new.options):
            return new, events
        if taken < limit and _can_draw(new):
            return new, events
        events.append(event("turn_ended", seat=seat, reason="no_play"))
        new, more = _advance(self, new, seat)
        return new, events + more


def _can_draw(state: PossumState) -> bool:
    return bool(state.draw) or len(state.pile) > 1


def _reshuffled(state: PossumState) -> PossumState:
    """The discards under the top card, shuffled, become the draw pile."""
    count = state.reshuffles + 1
    rng = cards.rng_for(state.seed, "reshuffle", count)
    return replace(
        state,
        draw=tuple(cards.shuffled(state.pile[:-1], rng)),
        pile=state.pile[-1:],
        reshuffles=count,
    )


def _advance(game: PossumGame, state: PossumState, after: int) -> tuple[PossumState, list[Event]]:
    """Give the turn to the next seat clockwise that can play or draw, skipping
    the others; if every seat would be skipped the game ends stalled."""
    n = len(state.hands)
    top = value(state.pile[-1])
    drawable = _can_draw(state)
    events: list[Event] = []
    for step in range(1, n + 1):
        seat = (after + step) % n
        if drawable or can_play(value_counts(state.hands[seat]), top, state.options):
            return replace(state, turn=seat, draws_taken=0), events
        events.append(event("skipped", seat=seat))
    final = replace(state, turn=None, draws_taken=0, stalled=True)
    return final, [*events, _game_over(game, final)]


def _game_over(game: PossumGame, state: PossumState) -> Event:
    return event(
        "game_over",
        result=game.result(state),
        stalled=state.stalled,
        hands=[list(h) for h in state.hands],
    )
