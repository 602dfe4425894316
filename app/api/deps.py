"""Dependencies shared by the HTTP and WebSocket routes."""

from __future__ import annotations

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from app.core.config import Settings, get_settings
from app.rooms.errors import RoomError
from app.rooms.manager import RoomManager


def get_rooms(request: Request) -> RoomManager:
    rooms: RoomManager = request.app.state.rooms
    return rooms


def get_app_settings(conn: HTTPConnection) -> Settings:
    """The app's own settings (create_app's), for HTTP requests and sockets alike."""
    settings = getattr(conn.app.state, "settings", None)
    return settings if isinstance(settings, Settings) else get_settings()


#: HTTP status for each refusal code the room routes can give
_STATUS = {"no_room": 404, "room_full": 409, "storage_error": 503}


def http_error(err: RoomError) -> HTTPException:
    return HTTPException(_STATUS.get(err.code, 400), detail=err.as_dict())
