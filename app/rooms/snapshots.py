"""Snapshots of a game's engine state, so a room is rebuilt from the latest one
plus the actions after it instead of by replaying a whole game (a late Posso
game is thousands of actions).

A snapshot is the engine state pickled.  Pickle is safe here because the bytes
only ever come from this server's own database, written by this code; it is
fragile across code changes, so every snapshot carries the hash of the code
that made it (`engine_key`: the game's engine package and the shared rules
modules).  A snapshot whose key differs from the running code's is never
unpickled: the room replays the log from the start instead, which is always
right, only slower.
"""

from __future__ import annotations

import hashlib
import importlib
import pickle
from functools import cache
from pathlib import Path
from typing import Any

from app.games.base import Game
from app.store.records import Snapshot

#: a snapshot every this many actions: a rebuild replays fewer than this many
SNAPSHOT_EVERY = 100
#: the modules every engine builds on
_SHARED = ("app.games.base", "app.games.cards")


@cache
def engine_key(game: Game[Any]) -> str:
    """A hash of the source of `game`'s engine and the modules it builds on."""
    digest = hashlib.sha256()
    package = type(game).__module__.rsplit(".", 1)[0]
    files: list[Path] = []
    for name in (*_SHARED, package):
        module = importlib.import_module(name)
        path = Path(module.__file__ or "")
        files += sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()[:32]


def take(game: Game[Any], seq: int, state: Any) -> Snapshot:
    return Snapshot(seq, engine_key(game), pickle.dumps(state, pickle.HIGHEST_PROTOCOL))


def restore(game: Game[Any], snapshot: Snapshot) -> Any | None:
    """The state in `snapshot`, or None if other code made it."""
    if snapshot.engine != engine_key(game):
        return None
    return pickle.loads(snapshot.state)
