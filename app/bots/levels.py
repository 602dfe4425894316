"""Bot levels: which bot plays a seat, by game and level.

- `random`: a uniformly random legal move (a yardstick for the arena);
- `easy`: the game's heuristic bot, which now and then plays a random legal
  move instead, as a distracted beginner would;
- `normal`: the game's heuristic bot (what stands in for someone away);
- `strong`: determinized search with the heuristic as its playout policy
  (app/bots/search.py), for the games where it beats the heuristic; the
  heuristic otherwise (Possum: `HEURISTIC_IS_STRONGER`, docs/bots.md).

A game without its own heuristic still gets a player (RandomBot), so a room
never stalls for want of one.
"""

from __future__ import annotations

import random
from typing import Any

from app.bots.base import Action, Bot, RandomBot
from app.bots.bigtwo import BigTwoBot
from app.bots.possession import PossessionBot
from app.bots.posso import PossoBot
from app.bots.possum import PossumBot
from app.bots.search import strong_bot

LEVELS = ("easy", "normal", "strong")
#: levels the arena also knows
ARENA_LEVELS = ("random", *LEVELS)
DEFAULT_LEVEL = "normal"

#: how often the easy bot plays a random legal move instead of the heuristic's
EASY_SLIP = 0.25

HEURISTICS: dict[str, Bot] = {
    "bigtwo": BigTwoBot(),
    "posso": PossoBot(),
    "possession": PossessionBot(),
    "possum": PossumBot(),
}

_RANDOM = RandomBot()


class EasyBot:
    """The heuristic, with a slip now and then."""

    def __init__(self, heuristic: Bot, slip: float = EASY_SLIP) -> None:
        self.heuristic = heuristic
        self.slip = slip

    def choose(
        self, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
    ) -> Action:
        if rng.random() < self.slip:
            return rng.choice(legal)
        return self.heuristic.choose(view, legal, seat, rng)


def heuristic_for(game_name: str) -> Bot:
    return HEURISTICS.get(game_name) or _RANDOM


def bot_for(
    game_name: str,
    level: str = DEFAULT_LEVEL,
    playouts: int | None = None,
    wall_cap: float | None = None,
) -> Bot:
    """The bot for a seat of `game_name` at `level`; `playouts` and `wall_cap`
    set a strong bot's budget and time cap (its defaults otherwise)."""
    if level not in ARENA_LEVELS:
        raise ValueError(f"unknown bot level {level!r}: one of {', '.join(ARENA_LEVELS)}")
    if level == "random":
        return _RANDOM
    heuristic = heuristic_for(game_name)
    if level == "easy":
        return EasyBot(heuristic)
    if level == "strong":
        found = strong_bot(game_name, heuristic, playouts, wall_cap)
        if found is not None:
            return found
    return heuristic
