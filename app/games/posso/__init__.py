"""Posso: the rules engine (docs/games/posso.md states its rules and wire shapes)."""

from app.games.posso.engine import PossoGame
from app.games.posso.finder import find_go_down

POSSO = PossoGame()

__all__ = ["POSSO", "PossoGame", "find_go_down"]
