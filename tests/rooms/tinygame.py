"""A tiny game for testing the room layer without the real engines.

It has what the rooms must get right: hidden hands, a private event (the card
you drew), a simultaneous phase with hidden choices (sealed bids, each seat in
`to_act` at once) that a room timer closes, and turns.

- Deal `hand` cards each from one shuffled deck; the rest is the stock.
- Bid phase: every seat bids 0..2 at once (the values stay secret until all have
  bid or the "posso_window" timer runs out; silent seats bid 0).
- Play phase: in turn, play one card onto the public pile; while the stock
  lasts, draw its top card (only you learn which).  When every hand is empty
  the game ends: score = number of your played cards of rank 7 or more + your bid.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from pydantic import Field

from app.games.base import Action, Event, Game, GameOptions, IllegalAction, View, event
from app.games.cards import rank, rng_for, stacked, standard_deck


class TinyOptions(GameOptions):
    hand: int = Field(default=3, ge=1, le=6)
    bidding: bool = True


@dataclasses.dataclass(frozen=True)
class TinyState:
    seats: int
    hands: tuple[tuple[str, ...], ...]
    stock: tuple[str, ...]
    pile: tuple[tuple[int, str], ...]  # (seat, card) in play order
    phase: str  # bid | play | over
    bids: tuple[int | None, ...]
    turn: int


class TinyGame(Game[TinyState]):
    name = "tiny"
    title = "Tiny"
    min_seats = 2
    max_seats = 4
    Options = TinyOptions

    def new_game(
        self, seats: int, options: dict[str, Any], seed: int, deck: list[str] | None = None
    ) -> TinyState:
        opts = self.parse_options(options)
        assert isinstance(opts, TinyOptions)
        self.check_seats(seats)
        cards = stacked(standard_deck(), deck, rng_for(seed, "deal"))
        k = opts.hand
        hands = tuple(tuple(cards[s * k : (s + 1) * k]) for s in range(seats))
        return TinyState(
            seats=seats,
            hands=hands,
            stock=tuple(cards[seats * k : seats * k + seats * 2]),
            pile=(),
            phase="bid" if opts.bidding else "play",
            bids=(None,) * seats if opts.bidding else (0,) * seats,
            turn=0,
        )

    def to_act(self, state: TinyState) -> set[int]:
        if state.phase == "bid":
            return {s for s in range(state.seats) if state.bids[s] is None}
        if state.phase == "play":
            return {state.turn}
        return set()

    def legal_actions(self, state: TinyState, seat: int) -> list[Action]:
        if seat not in self.to_act(state):
            return []
        if state.phase == "bid":
            return [{"type": "bid", "n": n} for n in range(3)]
        return [{"type": "play", "card": c} for c in dict.fromkeys(state.hands[seat])]

    def timer(self, state: TinyState) -> str | None:
        return "posso_window" if state.phase == "bid" else None

    def apply(
        self, state: TinyState, seat: int | None, action: Action
    ) -> tuple[TinyState, list[Event]]:
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            raise IllegalAction("bad_action", "an action is an object with a type")
        kind = action["type"]
        if kind == "timeout":
            if seat is not None or state.phase != "bid":
                raise IllegalAction("bad_action", "no timer is running")
            bids = tuple(0 if b is None else b for b in state.bids)
            return self._end_bidding(state, bids)
        if seat is None or not isinstance(seat, int) or not 0 <= seat < state.seats:
            raise IllegalAction("bad_seat", "no such seat")
        if seat not in self.to_act(state):
            raise IllegalAction("not_your_turn", "it is not your turn")
        if kind == "bid" and state.phase == "bid":
            n = action.get("n")
            if isinstance(n, bool) or n not in (0, 1, 2):
                raise IllegalAction("bad_bid", "bid 0, 1 or 2")
            bids = tuple(n if s == seat else b for s, b in enumerate(state.bids))
            if all(b is not None for b in bids):
                new, evs = self._end_bidding(state, bids)
                return new, [event("bid", None, seat=seat), *evs]
            return dataclasses.replace(state, bids=bids), [event("bid", None, seat=seat)]
        if kind == "play" and state.phase == "play":
            card = action.get("card")
            hand = list(state.hands[seat])
            if not isinstance(card, str) or card not in hand:
                raise IllegalAction("bad_card", "you do not hold that card")
            hand.remove(card)
            events = [event("played", None, seat=seat, card=card)]
            stock = state.stock
            if stock:
                hand.append(stock[0])
                events.append(event("drew", seat, card=stock[0]))
                events.append(event("drew", None, seat=seat))
                stock = stock[1:]
            hands = tuple(tuple(hand) if s == seat else h for s, h in enumerate(state.hands))
            over = not any(hands)
            new = dataclasses.replace(
                state,
                hands=hands,
                stock=stock,
                pile=(*state.pile, (seat, card)),
                phase="over" if over else "play",
                turn=self._next_turn(hands, seat, state.seats),
            )
            if over:
                events.append(event("game_over", None, result=self.result(new)))
            return new, events
        raise IllegalAction("bad_action", f"{kind!r} is not allowed now")

    def _end_bidding(
        self, state: TinyState, bids: tuple[int | None, ...]
    ) -> tuple[TinyState, list[Event]]:
        new = dataclasses.replace(state, bids=bids, phase="play")
        return new, [event("bids", None, bids=list(bids))]

    @staticmethod
    def _next_turn(hands: tuple[tuple[str, ...], ...], seat: int, n: int) -> int:
        for k in range(1, n + 1):
            s = (seat + k) % n
            if hands[s]:
                return s
        return seat

    def view(self, state: TinyState, seat: int | None) -> View:
        over = state.phase == "over"
        bidding = state.phase == "bid"
        v: View = {
            "game": self.name,
            "seat": seat,
            "seats": state.seats,
            "phase": state.phase,
            "to_act": sorted(self.to_act(state)),
            "turn": None if bidding or over else state.turn,
            "dealer": None,
            "counts": [len(h) for h in state.hands],
            "stock": len(state.stock),
            "pile": [c for _, c in state.pile],
            "bids": None if bidding else list(state.bids),
            "has_bid": [b is not None for b in state.bids],
            "over": over,
            "result": self.result(state),
        }
        if seat is not None:
            v["hand"] = list(state.hands[seat])
            v["my_bid"] = state.bids[seat]
        if over:
            v["hands"] = [list(h) for h in state.hands]
        return v

    def result(self, state: TinyState) -> dict[str, Any] | None:
        if state.phase != "over":
            return None
        scores = [0] * state.seats
        for s, c in state.pile:
            scores[s] += 1 if rank(c) >= 7 else 0
        for s, b in enumerate(state.bids):
            scores[s] += b or 0
        order = sorted(set(scores), reverse=True)
        places = [[s for s in range(state.seats) if scores[s] == x] for x in order]
        return {"places": places, "scores": scores}

    def all_cards(self, state: TinyState) -> list[str]:
        return [c for h in state.hands for c in h] + list(state.stock) + [c for _, c in state.pile]


TINY = TinyGame()


def tiny_known(state: TinyState, seat: int | None) -> Counter[str]:
    """Every card `seat` may know in `state`: its hand, the pile, all hands once over."""
    known: Counter[str] = Counter(c for _, c in state.pile)
    if seat is not None:
        known.update(state.hands[seat])
    if state.phase == "over":
        for h in state.hands:
            known.update(h)
    return known
