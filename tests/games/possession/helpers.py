"""Stacked deals and scripted turns for Possession scenario tests.

Hands are written as they read at a table ("4D 5D 6D ..."); `stack` turns
them into the exact dealing order of docs/cards.md (Dealing), so each test states the
position it needs and lets the real engine deal it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from app.games.base import Event
from app.games.cards import build_deck
from app.games.possession import POSSESSION
from app.games.possession.model import HAND_SIZE, PossessionState

G = POSSESSION


def stack(
    hands: list[str],
    upturn: str,
    stock: str = "",
    stock_end: str = "",
    dealer: int = 0,
) -> list[str]:
    """The full deck in dealing order: the hands (seat by seat), the upturn,
    then the stock from the top: `stock`, every unnamed card in deck order,
    and `stock_end` last (so it is drawn last)."""
    n = len(hands)
    split = [h.split() for h in hands]
    for seat, h in enumerate(split):
        assert len(h) == HAND_SIZE, f"seat {seat} needs 9 cards, got {len(h)}"
    order: list[str] = []
    for i in range(HAND_SIZE):
        for j in range(n):
            order.append(split[(dealer + 1 + j) % n][i])
    order.append(upturn)
    order.extend(stock.split())
    named = Counter(order) + Counter(stock_end.split())
    full = build_deck(2 if n == 4 else 1)
    rest = Counter(full) - named
    assert not (named - Counter(full)), "a card is named more often than the decks hold"
    for card in full:
        if rest[card]:
            order.append(card)
            rest[card] -= 1
    order.extend(stock_end.split())
    return order


def start(
    hands: list[str],
    upturn: str,
    stock: str = "",
    stock_end: str = "",
    dealer: int = 0,
    seed: int = 1,
    **options: Any,
) -> PossessionState:
    deck = stack(hands, upturn, stock, stock_end, dealer)
    return G.new_game(len(hands), {"first_dealer": dealer, **options}, seed, deck)


def act(
    state: PossessionState, seat: int, type_: str, **fields: Any
) -> tuple[PossessionState, list[Event]]:
    return G.apply(state, seat, {"type": type_, **fields})


def play(state: PossessionState, *moves: tuple[Any, ...]) -> PossessionState:
    """Apply (seat, type, fields) moves in order, failing loudly on a refusal."""
    for seat, type_, *rest in moves:
        fields = rest[0] if rest else {}
        state, _ = G.apply(state, seat, {"type": type_, **fields})
    return state


def drawn_card(events: list[Event]) -> str:
    card: str = next(e["card"] for e in events if e["type"] == "drew_card")
    return card


def turn(state: PossessionState) -> int:
    assert state.turn is not None, "nobody is to act"
    return state.turn


def pass_turn(state: PossessionState) -> PossessionState:
    """The turn seat takes the stock card and lays it straight on the pile."""
    seat = turn(state)
    state, events = act(state, seat, "draw", source="stock")
    state, _ = act(state, seat, "discard", card=drawn_card(events))
    return state


def run_down(state: PossessionState, leave: int = 1) -> PossessionState:
    """Pass turns until `leave` stock cards remain."""
    while len(state.stock) > leave:
        state = pass_turn(state)
    return state
