"""Dependencies shared by the HTTP and WebSocket routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from starlette.requests import HTTPConnection

from app.core.config import Settings, get_settings
from app.rooms.errors import RoomError
from app.rooms.manager import RoomManager
from app.rooms.tokens import normalise_code


def get_rooms(request: Request) -> RoomManager:
    rooms: RoomManager = request.app.state.rooms
    return rooms


def get_app_settings(conn: HTTPConnection) -> Settings:
    """The app's own settings (create_app's), for HTTP requests and sockets alike."""
    settings = getattr(conn.app.state, "settings", None)
    return settings if isinstance(settings, Settings) else get_settings()


#: HTTP status for each refusal code the room routes can give
_STATUS = {
    "no_room": 404,
    "room_full": 409,
    "removed": 403,
    "locked": 403,
    "storage_error": 503,
    "unavailable": 503,
}


def http_error(err: RoomError) -> HTTPException:
    return HTTPException(_STATUS.get(err.code, 400), detail=err.as_dict())


#: longer than any code ever stored (a column of 32): what is kept of a
#: normalised code that is too long, so that it stays one no room has
MAX_CODE_KEPT = 100


def room_code(code: str) -> str:
    """The room code of a route's path, normalised once, here at the boundary
    (any case, spaces, dashes), so everything below - one process or several,
    the socket caps - sees the code as stored.  Normalised whole, then cut:
    cut first, a valid code followed by enough dashes would lose whatever
    came after them and be taken for the code alone."""
    return normalise_code(code)[:MAX_CODE_KEPT]


#: a route's `{code}`, normalised
RoomCode = Annotated[str, Depends(room_code)]
