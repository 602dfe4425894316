"""Possession (Guy Tran, 1998): pick up, put down, and steal properties."""

from app.games.possession.engine import PossessionGame

POSSESSION = PossessionGame()

__all__ = ["POSSESSION", "PossessionGame"]
