"""Possum: answer the top of the discard pile with a card that matches it, two
that add up to it, or two whose difference it is; first to run out wins."""

from app.games.possum.engine import PossumGame

POSSUM = PossumGame()

__all__ = ["POSSUM", "PossumGame"]
