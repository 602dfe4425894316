"""Hand-built Big Two positions for scenario tests.

`position` starts from a real deal and replaces the hands and the trick, putting
every card nobody holds among the played cards, so conservation still holds."""

from __future__ import annotations

from typing import Any

from app.games.bigtwo import BIGTWO
from app.games.bigtwo.combos import classify
from app.games.bigtwo.model import BigTwoState, Trick
from app.games.bigtwo.order import DECK, by_power


def deck_for(hands: list[str]) -> list[str]:
    """A stacked deck giving seat i the 13 cards of hands[i] (first_dealer=3,
    so the first card goes to seat 0)."""
    split = [h.split() for h in hands]
    assert all(len(h) == 13 for h in split)
    return [split[i % 4][i // 4] for i in range(52)]


def position(
    hands: list[str],
    turn: int,
    *,
    trick: tuple[str, int] | None = None,
    passed: tuple[int, ...] = (),
    places: tuple[int, ...] = (),
    first_play: bool = False,
    **options: Any,
) -> BigTwoState:
    base = BIGTWO.new_game(4, dict(options), seed=1)
    held = [tuple(by_power(h.split())) for h in hands]
    in_hands = {c for h in held for c in h}
    table = None
    if trick is not None:
        combo = classify(trick[0].split())
        assert combo is not None
        table = Trick(tuple(trick[0].split()), trick[1], combo)
    return base._replace(
        hands=tuple(held),
        turn=turn,
        trick=table,
        passed=frozenset(passed),
        places=places,
        first_play=first_play,
        played=tuple(c for c in DECK if c not in in_hands),
    )


def play(state: BigTwoState, seat: int, cards: str) -> tuple[BigTwoState, list[dict[str, Any]]]:
    return BIGTWO.apply(state, seat, {"type": "play", "cards": cards.split()})


def pass_(state: BigTwoState, seat: int) -> BigTwoState:
    return BIGTWO.apply(state, seat, {"type": "pass"})[0]
