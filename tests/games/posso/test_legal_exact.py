"""legal_actions is exact for play-ons and swaps: over many random positions,
every single-card play-on and swap the engine would accept is listed, and
every listed one is accepted.  The table offers only what is listed, so this
is what keeps an illegal "High end" button off the screen."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.base import IllegalAction
from app.games.posso import POSSO
from app.games.posso.melds import HIGH, LOW
from app.games.posso.model import PossoState
from app.games.posso.rules import SET
from tests.games.posso.checks import positions


def candidates(s: PossoState, seat: int) -> list[dict[str, Any]]:
    """Every single-card play-on and swap a player could ask for."""
    out: list[dict[str, Any]] = []
    for m in s.melds:
        for c in dict.fromkeys(s.hands[seat]):
            if m.kind == SET:
                out.append({"type": "play_on", "meld": m.id, "cards": [c]})
                continue
            for end in (LOW, HIGH):
                out.append({"type": "play_on", "meld": m.id, "cards": [c], "end": end})
                out.append({"type": "swap_wild", "meld": m.id, "card": c, "to": end})
    return out


def accepts(s: PossoState, seat: int, action: dict[str, Any]) -> bool:
    try:
        POSSO.apply(s, seat, action)
    except IllegalAction:
        return False
    return True


def key(a: dict[str, Any]) -> tuple[Any, ...]:
    return (a["type"], a["meld"], a.get("card") or a["cards"][0], a.get("end") or a.get("to"))


@pytest.mark.parametrize("seed", range(12))
def test_listed_play_ons_and_swaps_are_exactly_the_accepted_ones(seed: int) -> None:
    checked = 0
    for state, seat in positions(seed, 3 + seed % 3, 40):
        legal = POSSO.legal_actions(state, seat)
        listed = {key(a) for a in legal if a["type"] in ("play_on", "swap_wild")}
        accepted = {key(a) for a in candidates(state, seat) if accepts(state, seat, a)}
        assert listed == accepted, (
            f"seed {seed}, hand {state.hand_no}, seat {seat}: "
            f"listed but refused {sorted(listed - accepted)}; "
            f"accepted but not listed {sorted(accepted - listed)}"
        )
        checked += 1
    assert checked >= 5, f"seed {seed}: only {checked} positions with melds were reached"
