"""The room's own events (for everyone's log) and the close codes it uses."""

from __future__ import annotations

from typing import Any

from app.games.base import Event

CLOSE_LEFT = 1000
CLOSE_KICKED = 4403
#: the seat's token was replaced (the person went on with another device)
CLOSE_MOVED = 4401


def room_event(what: str, **fields: Any) -> Event:
    """An event about the room itself, addressed to everyone."""
    return {"type": "room", "to": None, "what": what, **fields}
