"""The room WebSocket: authenticate by the seat token in the first message,
then read client messages and hand each to the room; everything outbound goes
through the room's choke point and the connection's queue (see
docs/protocol.md).

Bad input is answered, not fatal: each refused frame gets an error naming the
problem and the socket stays open; only a sustained flood or a peer that stops
reading gets closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from app.api.deps import RoomCode, get_app_settings
from app.api.doors import LOOKUPS, Doors, Refused, address_of, doors_of
from app.core import logs
from app.rooms.cluster import CLOSE_TRY_AGAIN
from app.rooms.connection import Connection
from app.rooms.delivery import Resume
from app.rooms.envelope import EnvelopeError, frame_too_large, parse_message
from app.rooms.errors import RoomError
from app.rooms.manager import RoomManager, SocketTarget
from app.rooms.ratelimit import TokenBucket
from app.rooms.tokens import token_hash

log = logging.getLogger(__name__)
router = APIRouter()

CLOSE_BAD_TOKEN = 4401
CLOSE_NO_ROOM = 4404
CLOSE_FLOOD = 4429
#: the server failed on a message (RFC 6455's Internal Error): the tab
#: reconnects, and its unanswered message is reported as lost
CLOSE_SERVER_ERROR = 1011
#: a refused socket's close code, by the error that refused it (else CLOSE_NO_ROOM)
CLOSE_FOR = {
    "bad_token": CLOSE_BAD_TOKEN,
    "seat_moved": CLOSE_BAD_TOKEN,
    "unavailable": CLOSE_TRY_AGAIN,
}
#: net refusals for rate (each accepted message takes one back) before closing
FLOOD_STRIKES = 100


def _error(
    code: str, message: str, msg_id: Any = None, v: int = 0, retry_after: int | None = None
) -> str:
    error: dict[str, Any] = {"code": code, "message": message}
    if retry_after is not None:
        error["retry_after"] = retry_after
    return orjson.dumps({"re": msg_id, "error": error, "v": v}).decode()


def _welcome(build: str | None) -> str:
    return orjson.dumps({"welcome": {"build": build}}).decode()


@router.websocket("/ws/rooms/{code}")
async def room_socket(websocket: WebSocket, code: RoomCode) -> None:
    await websocket.accept()
    doors = doors_of(websocket)
    address = address_of(websocket)
    try:
        # an address that spent its lookups guessing is refused before any;
        # this socket's own lookup is counted once its answer is known
        await doors.pass_through(LOOKUPS, address, count=False)
    except Refused as err:
        await _refuse(websocket, "rate_limited", err.message, CLOSE_FLOOD, err.retry_after)
        return
    place = await doors.sockets.open_address(address)
    if isinstance(place, str):
        await _refuse(websocket, "too_many_sockets", place, CLOSE_FLOOD)
        return
    try:
        await _authenticated(websocket, code, doors, address)
    finally:
        await doors.sockets.close(place)


async def _guessed(doors: Doors, address: str) -> None:
    """A socket whose token or room was not one: a guess, on its address's count."""
    with contextlib.suppress(Refused):
        await doors.pass_through(LOOKUPS, address)


async def _authenticated(websocket: WebSocket, code: str, doors: Doors, address: str) -> None:
    """The socket's first message names its seat (`{"auth": token, "since": v,
    "batch": true, "build": id}`): the token never appears in a URL, so no
    access log holds it.

    Friends behind one address (a household) are counted apart: a socket
    whose seat turns out valid counts on its seat's own lookups, a refused one
    on the address's (docs/security.md), so one page reconnecting in a loop
    spends only its own seat's way in, never its housemates'."""
    hello = await _hello(websocket)
    if hello is None:
        await _guessed(doors, address)
        await _refuse(websocket, "bad_token", AUTH_REFUSED, CLOSE_BAD_TOKEN)
        return
    if hello.client is not None:
        # the client this server serves, for a tab that said which it runs: a
        # tab running another reloads itself at a calm moment (app/api/client.py)
        with contextlib.suppress(Exception):
            await websocket.send_text(_welcome(websocket.app.state.build))
    seat_key = token_hash(hello.token)  # one seat's tabs, whichever process owns its room
    try:
        await doors.pass_through(LOOKUPS, f"seat:{code}:{seat_key}")
    except Refused as err:
        await _refuse(websocket, "rate_limited", err.message, CLOSE_FLOOD, err.retry_after)
        return
    place = await doors.sockets.open_seat(code, seat_key)
    if isinstance(place, str):
        await _refuse(websocket, "too_many_sockets", place, CLOSE_FLOOD)
        return
    try:
        if not await _serve(websocket, code, hello):
            await _guessed(doors, address)
    finally:
        await doors.sockets.close(place)


@dataclass(frozen=True)
class Hello:
    token: str
    since: Resume | None
    batch: bool
    #: the build of the client that opened the socket, if it said (then it is welcomed)
    client: str | None = None


AUTH_REFUSED = (
    'the first message must be {"auth": "<seat token>"} with this room\'s valid seat token'
)


async def _hello(websocket: WebSocket) -> Hello | None:
    """The authentication message, or None if it is missing, late or malformed."""
    settings = get_app_settings(websocket)
    try:
        msg = await asyncio.wait_for(websocket.receive(), timeout=settings.auth_timeout)
    except (TimeoutError, WebSocketDisconnect, RuntimeError):
        return None
    data = msg.get("text")
    if data is None:
        data = msg.get("bytes")
    if data is None or frame_too_large(data, settings.max_frame_bytes):
        return None
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("auth"), str):
        return None
    client = body.get("build")
    if not isinstance(client, str) or len(client) > 64:
        client = None
    return Hello(body["auth"], _resume(body), body.get("batch") is True, client)


def _resume(body: dict[str, Any]) -> Resume | None:
    """Where the tab left off: `since` in the incarnation `inc` (a `since`
    without one, or with a malformed one, can only be answered with a full
    view: an empty incarnation matches none)."""
    since, inc = body.get("since"), body.get("inc")
    if not isinstance(since, int) or isinstance(since, bool):
        return None
    if not isinstance(inc, str) or len(inc) > 64:
        inc = ""
    return Resume(inc, since)


#: refusals that say the code or the token was not one (a guess)
GUESSES = frozenset({"bad_token", "no_room"})


async def _serve(websocket: WebSocket, code: str, hello: Hello) -> bool:
    """Serve the socket until it closes; False if its seat or room was not one."""
    rooms: RoomManager = websocket.app.state.rooms
    logs.in_room(code)  # the socket's own log lines name its room
    dead = asyncio.Event()
    conn = Connection(_sender(websocket), websocket.close, on_dead=dead.set, batch=hello.batch)
    try:
        target = await rooms.open_socket(code, hello.token, conn, hello.since)
    except RoomError as err:
        await conn.stop()
        # a token a link replaced is told what happened, in plain words
        close = CLOSE_FOR.get(err.code, CLOSE_NO_ROOM)
        message = AUTH_REFUSED if err.code == "bad_token" else err.message
        await _refuse(websocket, err.code, message, close)
        return err.code not in GUESSES
    idle = asyncio.Event()
    idle.set()
    stopper = asyncio.create_task(dead.wait())
    reader = asyncio.create_task(_read(websocket, conn, target, idle)) if target else stopper
    try:
        await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # never cancel the reader inside a handle: a command cut in half
        # would leave the room changed but unannounced
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(idle.wait(), timeout=30.0)
        for task in (reader, stopper):
            task.cancel()
        for task in (reader, stopper):
            try:
                await task
            except asyncio.CancelledError:
                pass
            except Exception:  # the socket ends, and what ended it is said
                log.exception("room %s: the socket's reader failed", code)
                conn.close(CLOSE_SERVER_ERROR, "the server failed on that message")
        if target is not None:
            with contextlib.suppress(Exception):
                await target.disconnect(conn)
        if not conn.closing:
            await conn.stop()
        else:  # let a queued close (left, kicked, flooding) go out first
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(dead.wait(), timeout=2.0)
            await conn.stop()
    return True


def _sender(websocket: WebSocket) -> Callable[[str], Awaitable[None]]:
    """Sends a text frame with the WebSocket's public, documented `send`
    (an ASGI message; FastAPI's reference lists it beside `send_text`, which
    wraps it): one coroutine less per frame, with the same state checks."""
    send = websocket.send

    def send_text(text: str) -> Awaitable[None]:
        return send({"type": "websocket.send", "text": text})

    return send_text


async def _refuse(
    websocket: WebSocket, code: str, message: str, close_code: int, retry_after: int | None = None
) -> None:
    with contextlib.suppress(Exception):
        await websocket.send_text(_error(code, message, retry_after=retry_after))
        await websocket.close(close_code, message[:120])


async def _read(
    websocket: WebSocket, conn: Connection, room: SocketTarget, idle: asyncio.Event
) -> None:
    limits = get_app_settings(websocket)
    limit = limits.max_frame_bytes
    bucket = TokenBucket(limits.max_messages_per_second)
    strikes = 0
    try:
        while True:
            msg = await websocket.receive()
            if msg["type"] == "websocket.disconnect":
                return
            data = msg.get("text")
            if data is None:
                data = msg.get("bytes")
            if data is None:
                continue
            if room.closed:
                conn.close(1000, "the room has closed")
                return
            if frame_too_large(data, limit):
                # never sent by a client that follows the protocol: each one is
                # a strike toward the flood limit, however slowly they come
                bucket.take()
                strikes += 1
                if strikes >= FLOOD_STRIKES:
                    conn.close(CLOSE_FLOOD, "too many messages")
                    return
                conn.push(_error("too_large", f"messages are limited to {limit} bytes", v=room.v))
                continue
            try:
                msg_id, kind, payload = parse_message(data)
            except EnvelopeError as err:
                msg_id, kind, payload = err.msg_id, "", {}
                error: tuple[str, str] | None = (err.code, err.message)
            else:
                error = None
            if not bucket.take():
                strikes += 1
                if strikes >= FLOOD_STRIKES:
                    conn.close(CLOSE_FLOOD, "too many messages")
                    return
                rate = limits.max_messages_per_second
                conn.push(
                    _error(
                        "rate_limited",
                        f"slow down: at most {rate:g} messages a second",
                        msg_id,
                        room.v,
                    )
                )
                continue
            strikes = max(0, strikes - 1)  # a flood, not a burst, gets cut off
            if error is not None:
                conn.push(_error(*error, msg_id, room.v))
                continue
            idle.clear()
            try:
                await room.handle(conn, msg_id, kind, payload)
            finally:
                idle.set()
    except (WebSocketDisconnect, RuntimeError):
        # Starlette raises RuntimeError from receive once a send on this socket failed
        return
