"""All live rooms of this process: opening, finding and recovering them.

Recovery is replay: each open room comes back from its record, and its
unfinished game from seed + action log through the engine's `apply`, so a
restarted server resumes every game at its last logged action.  Tokens are
recognised by their hash, so the same browsers get the same seats back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from app.games.base import Game
from app.rooms.errors import RoomError
from app.rooms.room import Room, Seeds, new_seed
from app.rooms.settings import parse_settings
from app.rooms.text import clean_name
from app.rooms.tokens import new_code, normalise_code
from app.store.records import PlayerRecord, Records

log = logging.getLogger(__name__)

#: seconds between looks for rooms nobody uses any more
IDLE_SWEEP_EVERY = 600.0


class RoomManager:
    def __init__(
        self, records: Records, games: Mapping[str, Game[Any]], seeds: Seeds | None = None
    ) -> None:
        self.records = records
        self.games = games
        #: where new games' seeds come from (tests pass a seeded generator)
        self.seeds: Seeds = seeds or new_seed
        self.rooms: dict[str, Room] = {}

    def get(self, code: str) -> Room | None:
        return self.rooms.get(normalise_code(code))

    def require(self, code: str) -> Room:
        room = self.get(code)
        if room is None:
            raise RoomError("no_room", f"there is no open room {code!r}")
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
        code = new_code()
        while code in self.rooms:
            code = new_code()
        room = Room.new(
            code, game, parsed, room_settings, self.games, self.records, self._closed, self.seeds
        )
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
        """Bring back every open room from the records; returns how many."""
        count = 0
        for record, game_rec in await self.records.live_rooms():
            if record.closed or record.code in self.rooms:
                continue
            if record.game not in self.games:
                log.error(
                    "room %s: game %r is not available; not recovered", record.code, record.game
                )
                continue
            try:
                room = Room(
                    record, self.games, self.records, on_close=self._closed, seeds=self.seeds
                )
                if game_rec is not None:
                    room.restore_game(game_rec)
            except Exception:
                log.exception("room %s could not be recovered", record.code)
                continue
            self.rooms[record.code] = room
            count += 1
        return count

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
