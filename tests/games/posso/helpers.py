"""Stacked-deck set-ups and small drivers shared by the Posso tests."""

from __future__ import annotations

import copy
from typing import Any

from app.games.base import Event, IllegalAction
from app.games.posso import POSSO
from app.games.posso.model import PossoState


def deck_for(
    seats: int,
    hands: list[list[str]],
    upturn: str,
    stack: list[str] | tuple[str, ...] = (),
    *,
    dealer: int = 0,
    markers: tuple[str, str] = ("KC", "KD"),
) -> list[str]:
    """A stacked deck that deals `hands` (per seat, in the order each receives
    its cards), then `upturn`, then `stack` from the top."""
    size = len(hands[0])
    assert all(len(h) == size for h in hands), "every hand must have the deal's size"
    if seats == 2:
        ring: list[int | None] = [0, None, 1, None]
    else:
        ring = list(range(seats))
    start = ring.index(dealer)
    order = [ring[(start + 1 + i) % len(ring)] for i in range(len(ring))]
    out: list[str] = []
    phantom = 0
    for r in range(size):
        for seat in order:
            if seat is None:
                if r == 0:
                    out.append(markers[phantom])
                    phantom += 1
            else:
                out.append(hands[seat][r])
    return [*out, upturn, *stack]


def game(
    seats: int,
    hands: list[list[str]],
    upturn: str,
    stack: list[str] | tuple[str, ...] = (),
    *,
    dealer: int = 0,
    hand: int = 1,
    seed: int = 1,
    **options: Any,
) -> PossoState:
    """A game dealt from a stacked deck, cutting off unless asked for."""
    opts: dict[str, Any] = {
        "cutting": "off",
        "start_hand": hand,
        "first_dealer": dealer,
        **options,
    }
    deck = deck_for(seats, hands, upturn, stack, dealer=dealer)
    return POSSO.new_game(seats, opts, seed, deck)


def act(state: PossoState, seat: int | None, **action: Any) -> tuple[PossoState, list[Event]]:
    """Apply an action that must be accepted."""
    return POSSO.apply(state, seat, action)


def refused(state: PossoState, seat: int | None, **action: Any) -> str:
    """Apply an action that must be refused, check nothing changed, return its code."""
    before = copy.deepcopy(state)
    try:
        POSSO.apply(state, seat, action)
    except IllegalAction as err:
        assert err.message
        assert state == before
        return err.code
    raise AssertionError(f"{action!r} from seat {seat} was accepted")


def close_window(state: PossoState) -> PossoState:
    """Everyone eligible passes (the window after a discard or the upturn)."""
    while state.phase == "posso_window":
        state, _ = act(state, min(POSSO.to_act(state)), type="pass_posso")
    return state


def types(events: list[Event]) -> list[str]:
    return [e["type"] for e in events]


def public(events: list[Event], kind: str) -> dict[str, Any]:
    found = [e for e in events if e["type"] == kind and e["to"] is None]
    assert len(found) == 1, f"expected one public {kind} in {types(events)}"
    return found[0]
