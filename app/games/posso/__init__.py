"""Posso: the rules engine (see docs/games/posso.md for the wire shapes)."""

from app.games.posso.engine import PossoGame
from app.games.posso.finder import find_go_down

POSSO = PossoGame()

__all__ = ["POSSO", "PossoGame", "find_go_down"]
