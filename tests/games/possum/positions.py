"""Stacked decks and hand-built positions for Possum scenario tests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.games.possum import POSSUM
from app.games.possum.model import PossumState
from app.games.possum.plays import hand_key


def deck_for(hands: list[str], top: str, draw: str = "") -> list[str]:
    """A stacked deck dealing hands[i] (6 cards) to seat i when the last seat
    deals, then `top` turned up, then `draw` as the next cards of the draw pile."""
    split = [h.split() for h in hands]
    assert all(len(h) == 6 for h in split)
    n = len(split)
    return [split[i % n][i // n] for i in range(6 * n)] + [top, *draw.split()]


def deal(hands: list[str], top: str, draw: str = "", **options: Any) -> PossumState:
    n = len(hands)
    return POSSUM.new_game(
        n, {"first_dealer": n - 1, **options}, seed=11, deck=deck_for(hands, top, draw)
    )


def position(hands: list[str], pile: str, draw: str, turn: int = 0, **options: Any) -> PossumState:
    """Any hands (any sizes), pile (bottom first) and draw pile (next first)."""
    base = POSSUM.new_game(len(hands), dict(options), seed=3)
    return replace(
        base,
        hands=tuple(tuple(sorted(h.split(), key=hand_key)) for h in hands),
        pile=tuple(pile.split()),
        draw=tuple(draw.split()),
        turn=turn,
        draws_taken=0,
    )


def play(state: PossumState, seat: int, cards: str) -> tuple[PossumState, list[dict[str, Any]]]:
    return POSSUM.apply(state, seat, {"type": "play", "cards": cards.split()})


def draw(state: PossumState, seat: int) -> tuple[PossumState, list[dict[str, Any]]]:
    return POSSUM.apply(state, seat, {"type": "draw"})
