"""HTTP routes for opening, joining and looking at rooms (see docs/protocol.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import RoomCode, get_rooms, http_error
from app.api.doors import JOINS, LOOKUPS, ROOMS, limited
from app.api.identity import Identity, identity
from app.rooms.errors import RoomError, bad_claim
from app.rooms.manager import RoomManager
from app.rooms.settings import RoomSettings

router = APIRouter(prefix="/api", tags=["rooms"])
Rooms = Annotated[RoomManager, Depends(get_rooms)]
Who = Annotated[Identity, Depends(identity)]


class CreateRoom(BaseModel):
    model_config = ConfigDict(extra="forbid")

    game: str = Field(max_length=40)
    options: dict[str, Any] = Field(default_factory=dict)
    name: str = Field(max_length=200)
    settings: dict[str, Any] | None = None


class JoinRoom(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=200)
    spectator: bool = False


class Ticket(BaseModel):
    """What a browser keeps to come back to its seat: `token` is secret."""

    code: str
    token: str
    seat: int | None
    player: str


@router.post("/rooms", response_model=Ticket, dependencies=[limited(ROOMS)])
async def create_room(
    body: CreateRoom,
    rooms: Rooms,
    who: Who,
) -> Ticket:
    try:
        room, player, token = await rooms.create(
            body.game,
            body.options,
            body.name,
            body.settings,
            guest_id=who.guest_id,
            account_id=who.account_id,
        )
    except RoomError as err:
        raise http_error(err) from None
    return Ticket(code=room.code, token=token, seat=player.seat, player=player.player_id)


@router.post(
    "/rooms/{code}/join", response_model=Ticket, dependencies=[limited(LOOKUPS), limited(JOINS)]
)
async def join_room(
    code: RoomCode,
    body: JoinRoom,
    rooms: Rooms,
    who: Who,
) -> Ticket:
    try:
        code, player, token = await rooms.join(
            code,
            body.name,
            guest_id=who.guest_id,
            account_id=who.account_id,
            spectator=body.spectator,
        )
    except RoomError as err:
        raise http_error(err) from None
    return Ticket(code=code, token=token, seat=player.seat, player=player.player_id)


class ClaimSeat(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: str = Field(min_length=1, max_length=200)


@router.post("/rooms/{code}/claim", response_model=Ticket, dependencies=[limited(LOOKUPS)])
async def claim_seat(code: RoomCode, body: ClaimSeat, rooms: Rooms, who: Who) -> Ticket:
    """Take a place back on this device with a one-time seat link; the place's
    old token stops working.  A link for a room that is not open gets the same
    answer as any other bad link: no oracle for which codes exist."""
    try:
        code, player, token = await rooms.claim(code, body.claim, guest_id=who.guest_id)
    except RoomError as err:
        raise http_error(bad_claim() if err.code == "no_room" else err) from None
    return Ticket(code=code, token=token, seat=player.seat, player=player.player_id)


@router.get("/rooms/{code}", dependencies=[limited(LOOKUPS)])
async def get_room(code: RoomCode, rooms: Rooms) -> dict[str, Any]:
    try:
        return {"room": await rooms.public(code)}
    except RoomError as err:
        raise http_error(err) from None


@router.get("/room-settings")
async def room_settings() -> dict[str, Any]:
    return {"schema": RoomSettings.model_json_schema(), "defaults": RoomSettings().model_dump()}
