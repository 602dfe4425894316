"""The rules engines, registered by name.  Nothing here does I/O."""

from app.games.base import Action, Event, Game, GameOptions, IllegalAction, View

GAMES: dict[str, Game] = {}  # type: ignore[type-arg]


def register(game: Game) -> Game:  # type: ignore[type-arg]
    GAMES[game.name] = game
    return game


from app.games.bigtwo import BIGTWO  # noqa: E402  (the registry must exist first)
from app.games.possession import POSSESSION  # noqa: E402
from app.games.posso import POSSO  # noqa: E402
from app.games.possum import POSSUM  # noqa: E402

for _game in (POSSO, POSSESSION, POSSUM, BIGTWO):
    register(_game)

__all__ = ["GAMES", "Action", "Event", "Game", "GameOptions", "IllegalAction", "View", "register"]
