"""Possession behind the engine contract: turn flow, validation and ending.

A turn in play is pick-up then exactly one put-down; the showdown keeps only
property moves and folds.  Every check happens before anything is built, and
the new state is assembled with `dataclasses.replace`, so a refused action
cannot leave a half-changed state behind and an accepted one never touches
its input.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.games.base import (
    Action,
    Event,
    Game,
    IllegalAction,
    View,
    check_held,
    event,
    read_action,
    read_card,
    read_cards,
)
from app.games.cards import sort_key
from app.games.possession.actions import FIELDS, count_field, remove_cards
from app.games.possession.combos import (
    ajar_depth,
    extension_problem,
    new_property_kind,
    ordered_property,
    why_not_property,
)
from app.games.possession.deal import deal
from app.games.possession.model import (
    OVER,
    PLAY,
    SHOWDOWN,
    PossessionOptions,
    PossessionState,
    Property,
)
from app.games.possession.moves import extend_actions, meld_actions
from app.games.possession.view import build_view, property_json, public_part, seat_part


class PossessionGame(Game[PossessionState]):
    name = "possession"
    title = "Possession"
    min_seats = 2
    max_seats = 4
    Options = PossessionOptions

    # -- setting up -------------------------------------------------------------

    def new_game(
        self, seats: int, options: dict[str, Any], seed: int, deck: list[str] | None = None
    ) -> PossessionState:
        self.check_seats(seats)
        opts = self.parse_options(options)
        assert isinstance(opts, PossessionOptions)
        return deal(seats, opts, seed, deck, self.choose_dealer(seats, seed, opts.first_dealer))

    # -- asking -----------------------------------------------------------------

    def to_act(self, state: PossessionState) -> set[int]:
        if state.phase == OVER or state.turn is None:
            return set()
        return {state.turn}

    def legal_actions(self, state: PossessionState, seat: int) -> list[Action]:
        if state.phase == OVER or seat != state.turn:
            return []
        if state.phase == PLAY and not state.drawn:
            out: list[Action] = [{"type": "draw", "source": "stock"}]
            if state.pile:
                out.append({"type": "draw", "source": "pile"})
            return out
        hand = state.hands[seat]
        out = []
        if state.phase == PLAY:
            out.extend({"type": "discard", "card": c} for c in dict.fromkeys(hand))
        out.extend(meld_actions(hand, state.pile, state.rules))
        out.extend(extend_actions(hand, state.properties, state.rules))
        if can_keep(state):
            out.append({"type": "keep"})
        if state.phase == SHOWDOWN:
            out.append({"type": "fold"})
        return out

    def view(self, state: PossessionState, seat: int | None) -> View:
        return build_view(state, seat, self.result(state), can_keep(state))

    def public_view(self, state: PossessionState) -> View:
        return public_part(state, self.result(state), can_keep(state))

    def seat_view(self, state: PossessionState, seat: int | None) -> View:
        return seat_part(state, seat)

    def result(self, state: PossessionState) -> dict[str, Any] | None:
        return final_result(state) if state.phase == OVER else None

    def all_cards(self, state: PossessionState) -> list[str]:
        out = [c for hand in state.hands for c in hand]
        out.extend(state.stock)
        out.extend(state.pile)
        for p in state.properties:
            out.extend(p.cards)
        return out

    # -- acting -----------------------------------------------------------------

    def apply(
        self, state: PossessionState, seat: int | None, action: Action
    ) -> tuple[PossessionState, list[Event]]:
        kind = read_action(action, FIELDS, self.title)
        if kind == "timeout":
            raise IllegalAction("no_timer", "Possession has no timers to run out")
        if state.phase == OVER:
            raise IllegalAction("game_over", "the game is over")
        if type(seat) is not int or seat != state.turn:
            raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
        if kind == "draw":
            return self._draw(state, seat, action["source"])
        if kind == "fold":
            return self._fold(state, seat)
        if state.phase == PLAY and not state.drawn:
            raise IllegalAction("draw_first", "pick up first: draw from the stock or the pile")
        if kind == "discard":
            return self._discard(state, seat, read_card(action["card"], jokers=False))
        if kind == "meld":
            cards = read_cards(action["cards"], jokers=False)
            return self._meld(state, seat, cards, count_field(action.get("from_pile", 0)))
        if kind == "extend":
            return self._extend(
                state, seat, action["property"], read_cards(action["cards"], jokers=False)
            )
        return self._keep(state, seat)

    def _draw(
        self, state: PossessionState, seat: int, source: Any
    ) -> tuple[PossessionState, list[Event]]:
        if source not in ("stock", "pile"):
            raise IllegalAction("bad_action", "draw source must be 'stock' or 'pile'")
        if state.phase == SHOWDOWN:
            raise IllegalAction(
                "no_drawing", "there is no drawing in the showdown: make a property move or fold"
            )
        if state.drawn:
            raise IllegalAction("already_drew", "you have picked up this turn; now put down")
        if source == "pile":
            if not state.pile:
                raise IllegalAction("pile_empty", "the pile is empty: take the stock card")
            card = state.pile[-1]
            new = replace(
                state,
                pile=state.pile[:-1],
                hands=_with_hand(
                    state, seat, tuple(sorted((*state.hands[seat], card), key=sort_key))
                ),
                drawn=True,
            )
            return new, [event("drew", None, seat=seat, source="pile", card=card)]
        card = state.stock[-1]
        new = replace(
            state,
            stock=state.stock[:-1],
            hands=_with_hand(state, seat, tuple(sorted((*state.hands[seat], card), key=sort_key))),
            drawn=True,
        )
        events = [
            event("drew", None, seat=seat, source="stock", stock=len(new.stock)),
            event("drew_card", seat, seat=seat, source="stock", card=card),
        ]
        if can_keep(new):
            events.append(event("last_card", None, seat=seat))
        return new, events

    def _discard(
        self, state: PossessionState, seat: int, card: str
    ) -> tuple[PossessionState, list[Event]]:
        if state.phase == SHOWDOWN:
            raise IllegalAction(
                "no_discarding",
                "there is no discarding in the showdown: make a property move or fold",
            )
        check_held(state.hands[seat], [card])
        new = replace(
            state,
            hands=_with_hand(state, seat, remove_cards(state.hands[seat], [card])),
            pile=(*state.pile, card),
        )
        return self._end_turn(new, seat, [event("discarded", None, seat=seat, card=card)])

    def _meld(
        self, state: PossessionState, seat: int, cards: list[str], k: int
    ) -> tuple[PossessionState, list[Event]]:
        check_held(state.hands[seat], cards)
        if k > len(state.pile):
            raise IllegalAction(
                "bad_pile_count", f"the pile holds {len(state.pile)} card(s), not {k}"
            )
        depth = ajar_depth(state.pile)
        if k > depth:
            # Deeper cards are hidden; refusing on the count alone names none of them.
            raise IllegalAction(
                "not_a_property",
                f"only the top {depth} pile card(s) run together; deeper cards cannot join",
            )
        taken = state.pile[len(state.pile) - k :]
        combined = [*taken, *cards]
        kind = new_property_kind(combined, state.rules)
        if kind is None:
            raise IllegalAction("not_a_property", why_not_property(combined, state.rules))
        prop = Property(
            id=f"p{state.next_id}",
            owner=seat,
            kind=kind,
            cards=ordered_property(kind, combined),
        )
        new = replace(
            state,
            hands=_with_hand(state, seat, remove_cards(state.hands[seat], cards)),
            pile=state.pile[: len(state.pile) - k],
            properties=(*state.properties, prop),
            next_id=state.next_id + 1,
        )
        ev = event(
            "melded",
            None,
            seat=seat,
            property=property_json(prop, new),
            from_hand=cards,
            pile_cards=list(taken),
        )
        return self._end_turn(new, seat, [ev])

    def _extend(
        self, state: PossessionState, seat: int, prop_id: Any, cards: list[str]
    ) -> tuple[PossessionState, list[Event]]:
        if not isinstance(prop_id, str):
            raise IllegalAction("bad_action", "property must be a property id such as 'p1'")
        index = next((i for i, p in enumerate(state.properties) if p.id == prop_id), None)
        if index is None:
            raise IllegalAction("unknown_property", f"there is no property {prop_id!r}")
        check_held(state.hands[seat], cards)
        prop = state.properties[index]
        problem = extension_problem(prop, cards, state.rules)
        if problem is not None:
            raise IllegalAction(*problem)
        grown = Property(
            id=prop.id,
            owner=seat,
            kind=prop.kind,
            cards=ordered_property(prop.kind, (*prop.cards, *cards)),
        )
        props = list(state.properties)
        props[index] = grown
        new = replace(
            state,
            hands=_with_hand(state, seat, remove_cards(state.hands[seat], cards)),
            properties=tuple(props),
        )
        shown = property_json(grown, new)
        if prop.owner == seat:
            ev = event("added", None, seat=seat, property=shown, cards=cards)
        else:
            ev = event("stole", None, seat=seat, victim=prop.owner, property=shown, cards=cards)
        return self._end_turn(new, seat, [ev])

    def _keep(self, state: PossessionState, seat: int) -> tuple[PossessionState, list[Event]]:
        if not can_keep(state):
            raise IllegalAction(
                "no_keep", "keep is only for the player who drew the last stock card"
            )
        return self._end_turn(state, seat, [event("kept", None, seat=seat)])

    def _fold(self, state: PossessionState, seat: int) -> tuple[PossessionState, list[Event]]:
        if state.phase != SHOWDOWN:
            raise IllegalAction("no_fold", "folding is only possible in the showdown")
        folded = tuple(sorted((*state.folded, seat)))
        events = [event("folded", None, seat=seat)]
        active = [s for s in range(state.rules.seats) if s not in folded]
        if not active:
            return _game_over(replace(state, folded=folded), "all_folded", events)
        new = replace(state, folded=folded, turn=_next_active(state.rules.seats, folded, seat))
        if len(active) == 1 and not state.open_season:
            new = replace(new, open_season=True)
            events.append(event("open_season", None, seat=active[0]))
        return new, events

    def _end_turn(
        self, state: PossessionState, seat: int, events: list[Event]
    ) -> tuple[PossessionState, list[Event]]:
        """Pass the turn on after a put-down, handling the ends of the stock."""
        n = state.rules.seats
        if not state.hands[seat]:
            return _game_over(replace(state, emptied_by=seat), "emptied", events)
        if state.phase == SHOWDOWN:
            return replace(state, turn=_next_active(n, state.folded, seat)), events
        nxt = (seat + 1) % n
        if state.stock:
            return replace(state, turn=nxt, drawn=False), events
        if n == 3 and not state.turned_over:
            # Turned face down as a whole: the first card discarded becomes the top.
            stock = tuple(reversed(state.pile))
            state = replace(state, stock=stock, pile=(), turned_over=True)
            events.append(event("turned_over", None, stock=len(stock)))
            if stock:
                return replace(state, turn=nxt, drawn=False), events
        events.append(event("showdown", None, seat=nxt))
        return replace(state, phase=SHOWDOWN, turn=nxt, drawn=False), events


def can_keep(state: PossessionState) -> bool:
    """The last-card advantage: only at the exhaustion that starts the showdown."""
    return (
        state.phase == PLAY
        and state.drawn
        and not state.stock
        and (state.rules.seats != 3 or state.turned_over)
    )


def final_result(state: PossessionState) -> dict[str, Any]:
    """Places by estate size, best first; equal estates share a place."""
    scores = estate_sizes(state)
    places = [
        [s for s in range(state.rules.seats) if scores[s] == score]
        for score in sorted(set(scores), reverse=True)
    ]
    return {"places": places, "scores": scores}


def estate_sizes(state: PossessionState) -> list[int]:
    scores = [0] * state.rules.seats
    for p in state.properties:
        scores[p.owner] += len(p.cards)
    return scores


def _with_hand(
    state: PossessionState, seat: int, hand: tuple[str, ...]
) -> tuple[tuple[str, ...], ...]:
    hands = list(state.hands)
    hands[seat] = hand
    return tuple(hands)


def _next_active(seats: int, folded: tuple[int, ...], seat: int) -> int:
    for step in range(1, seats + 1):
        s = (seat + step) % seats
        if s not in folded:
            return s
    raise AssertionError("no active seat")  # callers end the game first


def _game_over(
    state: PossessionState, reason: str, events: list[Event]
) -> tuple[PossessionState, list[Event]]:
    over = replace(state, phase=OVER, turn=None, drawn=False)
    events.append(
        event(
            "game_over",
            None,
            reason=reason,
            seat=over.emptied_by,
            result=final_result(over),
            hands=[list(h) for h in over.hands],  # every hand is shown once the game is over
        )
    )
    return over, events
