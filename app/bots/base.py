"""How a bot is asked for a move.

A bot sees exactly what its seat may see: the game's `view(state, seat)` and the
seat's `legal_actions`; it never reads the state itself, so a bot can never
cheat, and the same code could drive a remote player.  Bots are deterministic
given their `rng`, which the room seeds, so bot games replay exactly.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

Action = dict[str, Any]


class Bot(Protocol):
    def choose(
        self, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
    ) -> Action:
        """One of `legal` (never empty when asked)."""


class RandomBot:
    """Picks uniformly among legal actions; the fallback and a test opponent."""

    def choose(
        self, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
    ) -> Action:
        return rng.choice(legal)
