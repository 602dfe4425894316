"""The log: plain lines by default, or with LOG_FORMAT=json one JSON object
per line, uvicorn's own lines and its access log included, so that a log
shipper can search by field rather than by pattern.

Each line carries the room and the game it happened in, when there is one:
`in_room` puts them in context variables as a socket's messages and a room's
timers run, so every line logged below that point (the room, the table, the
storage under them) names them without each call site passing them on.  A
task inherits the variables of the code that created it, and setting them in
a task changes them for that task alone.

What a line holds is what the code logs: no call site logs a token, a
cookie, a password, a link's secret or a push subscription, and the access
log holds paths only (seat tokens travel in the socket's first message,
never in a URL); tests/integration/test_evening.py greps a whole evening's
log for every secret it handed out.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

ROOM: ContextVar[str | None] = ContextVar("room", default=None)
GAME: ContextVar[str | None] = ContextVar("game", default=None)

#: the loggers uvicorn writes to (its own lines and the access log)
UVICORN = ("uvicorn", "uvicorn.error", "uvicorn.access")


def in_room(code: str, game_id: str | None = None) -> None:
    """What follows in this task happens in room `code` (and game `game_id`,
    its public id: what the history pages name it by)."""
    ROOM.set(code)
    GAME.set(game_id)


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message, room, game,
    and for the access log its parts (client, method, path, status)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        room, game = ROOM.get(), GAME.get()
        if room is not None:
            out["room"] = room
        if game is not None:
            out["game"] = game
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            client, method, path, _, status = args  # uvicorn's: ..., http version, status
            out.update(client=client, method=method, path=path, status=status)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def configure(log_format: str) -> None:
    """With "json", every line of the app and of uvicorn goes out as JSON on
    stderr, at the levels already set (uvicorn's --log-level); "plain"
    leaves logging as uvicorn set it up."""
    if log_format != "json":
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    root = logging.getLogger()
    root.handlers = [handler]
    if root.level == logging.WARNING:  # never configured: say what the app says
        root.setLevel(logging.getLogger("uvicorn").getEffectiveLevel())
    for name in UVICORN:
        logger = logging.getLogger(name)
        if logger.handlers:  # uvicorn's own: replaced, not added to
            logger.handlers = [handler]
