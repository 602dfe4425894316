"""The rules engines, registered by name.  Nothing here does I/O."""

from app.games.base import Action, Event, Game, GameOptions, IllegalAction, View

GAMES: dict[str, Game] = {}  # type: ignore[type-arg]


def register(game: Game) -> Game:  # type: ignore[type-arg]
    GAMES[game.name] = game
    return game


__all__ = ["GAMES", "Action", "Event", "Game", "GameOptions", "IllegalAction", "View", "register"]
