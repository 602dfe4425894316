"""All live rooms of this process: opening, finding and recovering them.

Recovery is lazy.  A restarted server reads only the codes of the open rooms,
so it answers at once however many there are; a room is rebuilt when it is
first needed (a socket, a join, a lobby request) from its record and its
game's latest snapshot plus the actions after it, and a background pass
rebuilds the rest one at a time, so rooms with waits that fall due (bots,
timers) carry on without anyone asking.  Tokens are recognised by their
hash, so the same browsers get the same seats back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from time import perf_counter
from typing import Any, Protocol

from app.bots.thinking import Thinker
from app.core import metrics
from app.games.base import Game
from app.rooms.clock import Clock, system_clock
from app.rooms.connection import Connection
from app.rooms.delivery import Resume
from app.rooms.errors import RoomError
from app.rooms.nudges import Nudge
from app.rooms.room import Room, Seeds, new_seed
from app.rooms.settings import parse_settings
from app.rooms.text import clean_name
from app.rooms.tokens import new_code, normalise_code, token_hash
from app.store.records import PlayerRecord, Records

log = logging.getLogger(__name__)


class SocketTarget(Protocol):
    """Where a socket's messages go: its room, or a relay to the room's owner."""

    @property
    def closed(self) -> bool: ...

    @property
    def v(self) -> int: ...

    async def handle(
        self, conn: Connection, msg_id: Any, kind: str, payload: dict[str, Any]
    ) -> None: ...

    async def disconnect(self, conn: Connection) -> None: ...


#: seconds between looks for rooms nobody uses any more
IDLE_SWEEP_EVERY = 600.0


class RoomManager:
    #: what a room is made of (a test may watch rooms through a subclass)
    room_class: type[Room] = Room

    def __init__(
        self,
        records: Records,
        games: Mapping[str, Game[Any]],
        seeds: Seeds | None = None,
        clock: Clock = system_clock,
        thinker: Thinker | None = None,
    ) -> None:
        self.records = records
        #: where the rooms' strong bots think (the app's process pool, which
        #: the app's lifespan starts and stops; at once on the loop if None)
        self.thinker = thinker
        #: the rooms' wall clock (the simulator's runs on its fast-forwarded loop)
        self.clock = clock
        self.games = games
        #: where new games' seeds come from (tests pass a seeded generator)
        self.seeds: Seeds = seeds or new_seed
        self.rooms: dict[str, Room] = {}
        #: open rooms known from the records but not rebuilt yet
        self.unloaded: set[str] = set()
        #: rooms being rebuilt: whoever else asks meanwhile waits for the same one
        self._loading: dict[str, asyncio.Future[Room | None]] = {}
        #: where rooms send turn nudges (app/rooms/nudges.py); None: no Web Push
        self.nudge: Callable[[Nudge], None] | None = None

    def get(self, code: str) -> Room | None:
        """A room already live in this process (see `find`)."""
        return self.rooms.get(normalise_code(code))

    async def find(self, code: str) -> Room | None:
        """The open room with this code, rebuilt from the records if need be."""
        code = normalise_code(code)
        room = self.rooms.get(code)
        if room is not None:
            return room
        pending = self._loading.get(code)
        if pending is not None:
            return await asyncio.shield(pending)
        done: asyncio.Future[Room | None] = asyncio.get_running_loop().create_future()
        self._loading[code] = done
        try:
            try:
                started = perf_counter()
                room = await self._load(code)
                if room is not None:
                    metrics.REBUILDS.inc()
                    metrics.since(metrics.REBUILD_SECONDS, started)
            except (RoomError, asyncio.CancelledError):
                raise
            except Exception as err:  # storage away: a clear refusal, tried again later
                log.exception("room %s could not be loaded", code)
                raise RoomError(
                    "storage_error", "the room cannot be opened just now; try again"
                ) from err
            done.set_result(room)
            return room
        except BaseException as err:
            done.set_exception(err)
            done.exception()  # retrieved: nobody else need be waiting
            raise
        finally:
            del self._loading[code]

    async def require(self, code: str) -> Room:
        room = await self.find(code)
        if room is None:
            raise RoomError("no_room", f"there is no open room {code!r}")
        return room

    # ------------------------------------------- what the routes ask of a room
    # (with several processes, ClusterManager answers these from the room's owner)

    async def join(
        self,
        code: str,
        name: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
        spectator: bool = False,
    ) -> tuple[str, PlayerRecord, str]:
        """Join the room; its code as stored, the person, their token."""
        room = await self.require(code)
        player, token = await room.join(
            name, guest_id=guest_id, account_id=account_id, spectator=spectator
        )
        return room.code, player, token

    async def claim(
        self,
        code: str,
        claim: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
    ) -> tuple[str, PlayerRecord, str, bool]:
        """Take a place with a link; the room's code as stored, the person,
        their new token, and whether it was the person's own move link."""
        room = await self.require(code)
        player, token, own = await room.claim(
            token_hash(claim), guest_id=guest_id, account_id=account_id
        )
        return room.code, player, token, own

    async def release_person(self, code: str, guest_id: str) -> int:
        """The guest moved to another browser: their place in this room
        leaves the old one too (Room.release_person)."""
        return await (await self.require(code)).release_person(guest_id)

    async def public(self, code: str) -> dict[str, Any]:
        return (await self.require(code)).room_public()

    async def open_socket(
        self, code: str, token: str, conn: Connection, since: Resume | None
    ) -> SocketTarget | None:
        """Attach an accepted socket's connection to its room; where its
        messages go from now on (None: the room turned it away and closed it).
        Raises `no_room` or `bad_token`."""
        room = await self.require(code)
        player = room.authenticate(token)
        if player is None:
            raise room.members.refusal(token_hash(token) if token else "")
        conn.player_id = player.player_id
        return room if await room.connect(conn, since) else None

    def _wire(self, room: Room) -> None:
        """Ties a room this process now holds (made or rebuilt) to the manager;
        one process has nothing to tie.  Runs before the room's first write."""

    async def _own_new(self, code: str) -> bool:
        """A room just stored is this process's to serve (several processes:
        its lease is taken at once, before anyone else may adopt it)."""
        return True

    async def _load(self, code: str) -> Room | None:
        self.unloaded.discard(code)
        found = await self.records.load_room(code)
        if found is None:
            return None
        record, game_rec = found
        if record.game not in self.games:
            log.error("room %s: game %r is not available; not recovered", code, record.game)
            return None
        room = self.room_class(
            record,
            self.games,
            self.records,
            on_close=self._closed,
            seeds=self.seeds,
            clock=self.clock,
            thinker=self.thinker,
        )
        self._wire(room)
        room.nudge = self.nudge
        await room.repair_tally()
        if game_rec is not None:
            try:
                await room.restore_game(game_rec)
            except Exception:
                log.exception("room %s could not be recovered", code)
                return None
        self.rooms[code] = room
        return room

    async def create(
        self,
        game_name: str,
        options: Any,
        name: str,
        settings: Any = None,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
    ) -> tuple[Room, PlayerRecord, str]:
        """A new room with its creator as host in seat 0."""
        game = self.games.get(game_name) if isinstance(game_name, str) else None
        if game is None:
            known = ", ".join(sorted(self.games)) or "none yet"
            raise RoomError("unknown_game", f"unknown game {game_name!r}; known: {known}")
        try:
            parsed = game.parse_options(options).model_dump(mode="json")
        except ValueError as err:
            raise RoomError("bad_options", str(err)) from None
        room_settings = parse_settings(settings)
        clean_name(name)
        for _ in range(20):  # the database decides: a code open anywhere is refused
            code = new_code()
            if code in self.rooms or code in self.unloaded or code in self._loading:
                continue
            room = self.room_class.new(
                code,
                game,
                parsed,
                room_settings,
                self.games,
                self.records,
                self._closed,
                self.seeds,
                self.clock,
                self.thinker,
            )
            stored = await self.records.create_room(room.members.snapshot())
            if stored and await self._own_new(code):
                break
        else:
            raise RoomError("storage_error", "no room code could be stored; try again")
        self._wire(room)
        room.nudge = self.nudge
        self.rooms[code] = room
        try:
            player, token = await room.join(
                name, guest_id=guest_id, account_id=account_id, host=True
            )
        except BaseException:
            self.rooms.pop(code, None)
            raise
        return room, player, token

    def _closed(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]

    async def recover(self) -> int:
        """Learn which rooms are open (cheap); returns how many.  `warm` then
        rebuilds them in the background."""
        codes = [c for c in await self.records.open_rooms() if c not in self.rooms]
        self.unloaded.update(codes)
        return len(codes)

    async def warm(self) -> None:
        """Rebuild every room still unloaded, one at a time, yielding between
        them so requests are never held up for long."""
        while self.unloaded:
            code = next(iter(self.unloaded))
            try:
                await self.find(code)
            except Exception:
                log.exception("room %s could not be rebuilt", code)
            self.unloaded.discard(code)
            await asyncio.sleep(0)

    async def close_idle(self, after: float) -> int:
        """Close every room nobody has been connected to for `after` seconds;
        returns how many."""
        closed = 0
        for room in list(self.rooms.values()):
            try:
                closed += await room.close_if_idle(after)
            except Exception:
                log.exception("room %s: could not close it as idle", room.code)
        return closed

    async def sweep_idle(self, after: float) -> None:
        """Run `close_idle` now and then, for as long as the server runs."""
        every = min(IDLE_SWEEP_EVERY, after / 4)
        while True:
            await asyncio.sleep(every)
            await self.close_idle(after)

    async def shutdown(self) -> None:
        for room in list(self.rooms.values()):
            await room.shutdown()
