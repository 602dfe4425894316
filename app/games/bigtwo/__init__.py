"""Big Two (Pusoy Dos): four seats, climb the table with singles, pairs,
triples and five-card hands until one player is left holding cards."""

from app.games.bigtwo.engine import BigTwoGame

BIGTWO = BigTwoGame()

__all__ = ["BIGTWO", "BigTwoGame"]
