"""HTTP routes for opening, joining and looking at rooms (see docs/protocol.md)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import RoomCode, get_rooms, http_error
from app.api.doors import JOINS, LOOKUPS, ROOMS, limited
from app.api.identity import Identity, guest_key, identity, new_secret, set_guest_cookie
from app.rooms.errors import RoomError, bad_claim
from app.rooms.manager import RoomManager
from app.rooms.places import moves_as_guest
from app.rooms.settings import RoomSettings

log = logging.getLogger(__name__)
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


class ClaimTicket(Ticket):
    """A claim's ticket: after the person's own move link, `moved_with`
    names the other rooms whose places moved with them, each waiting for
    this browser to open it."""

    moved_with: list[str] = Field(default_factory=list)


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


@router.post("/rooms/{code}/claim", response_model=ClaimTicket, dependencies=[limited(LOOKUPS)])
async def claim_seat(
    code: RoomCode, body: ClaimSeat, rooms: Rooms, who: Who, request: Request, response: Response
) -> ClaimTicket:
    """Take a place back on this device with a one-time seat link; the place's
    old token stops working.  A link for a room that is not open gets the same
    answer as any other bad link: no oracle for which codes exist.

    A guest's own move link moves the person: this browser is given a fresh
    cookie that acts as the person's guest id (their games in every room,
    their records), the old browser's cookie is revoked, and so are its
    places in the person's other open rooms, each of which waits for this
    browser (joining there gives the place back)."""
    try:
        code, player, token, own = await rooms.claim(
            code, body.claim, guest_id=who.guest_id, account_id=who.account_id
        )
    except RoomError as err:
        raise http_error(bad_claim() if err.code == "no_room" else err) from None
    moved_with: list[str] = []
    if own and moves_as_guest(player) and player.guest_id != who.guest_id:
        guest_id = str(player.guest_id)
        if await _move_guest(request, response, guest_id):
            moved_with = await _release_elsewhere(request, rooms, guest_id, code)
    return ClaimTicket(
        code=code, token=token, seat=player.seat, player=player.player_id, moved_with=moved_with
    )


async def _move_guest(request: Request, response: Response, guest_id: str) -> bool:
    """This browser becomes the guest `guest_id` (a fresh cookie bound to
    it); the person's other browsers stop acting as them.  Without a
    database there is no history to follow the person.  If the database
    fails here, the place has moved all the same (its new token is in the
    answer): the person's history stays with the old browser, and a log line
    says so - refusing now would lose the place, which the old device has
    already given up."""
    accounts = getattr(request.app.state, "accounts", None)
    if accounts is None:
        return False
    cookie = new_secret()
    try:
        await accounts.move_guest(guest_key(cookie), guest_id)
    except Exception:
        log.exception("a move link moved a place, but not its guest identity")
        return False
    set_guest_cookie(response, cookie)
    return True


async def _release_elsewhere(
    request: Request, rooms: RoomManager, guest_id: str, here: str
) -> list[str]:
    """The moved guest's places in their other open rooms leave the old
    browser, whose cookie no longer names them: a browser that is not the
    person holds no place of theirs.  A room that cannot be reached now
    (its server away) keeps the old browser's token until the person opens
    it on the new one - logged, and not a reason to undo the move."""
    try:
        codes = await request.app.state.accounts.rooms_of_guest(guest_id)
    except Exception:
        log.exception("a guest moved, but their other rooms could not be read")
        return []
    moved: list[str] = []
    for other in codes:
        if other == here:
            continue
        try:
            if await rooms.release_person(other, guest_id):
                moved.append(other)
        except Exception:
            log.exception("a guest moved, but their place in another room did not follow")
    return moved


@router.get("/rooms/{code}", dependencies=[limited(LOOKUPS)])
async def get_room(code: RoomCode, rooms: Rooms) -> dict[str, Any]:
    try:
        return {"room": await rooms.public(code)}
    except RoomError as err:
        raise http_error(err) from None


@router.get("/room-settings")
async def room_settings() -> dict[str, Any]:
    return {"schema": RoomSettings.model_json_schema(), "defaults": RoomSettings().model_dump()}
