"""Which bot plays which game.  An explicit table: a game without its own bot
still gets a player (RandomBot), so a room never stalls for want of one."""

from __future__ import annotations

from app.bots.base import Bot, RandomBot
from app.bots.bigtwo import BigTwoBot
from app.bots.possession import PossessionBot
from app.bots.posso import PossoBot
from app.bots.possum import PossumBot

BOTS: dict[str, Bot] = {
    "bigtwo": BigTwoBot(),
    "posso": PossoBot(),
    "possession": PossessionBot(),
    "possum": PossumBot(),
}

_RANDOM = RandomBot()


def bot_for(game_name: str) -> Bot:
    return BOTS.get(game_name) or _RANDOM


__all__ = ["BOTS", "Bot", "RandomBot", "bot_for"]
