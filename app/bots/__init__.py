"""Which bot plays which game, at which level (app/bots/levels.py)."""

from __future__ import annotations

from app.bots.base import Bot, RandomBot
from app.bots.levels import DEFAULT_LEVEL, HEURISTICS, LEVELS, bot_for, heuristic_for

#: the heuristic (normal) bot of each game
BOTS = HEURISTICS

__all__ = ["BOTS", "DEFAULT_LEVEL", "LEVELS", "Bot", "RandomBot", "bot_for", "heuristic_for"]
