"""The room's games, one after another: dealing a new one to the seated
people (and bots), finishing one that is over (its result, the series tally),
and rebuilding one after a restart.

`Dealer` is one room's.  It holds the room's fixed parts, starts and ends
games through `Table` (the only writer of game state) and the records, and
ends each in the room's own steps: saving its people and the one `change`
that tells everyone.  The series tally of a Big Two room is derived from its
finished games (`add_to_tally`), so `repair_tally` can make it again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from app.core import logs
from app.games.base import Event, Game
from app.rooms.delivery import Delivery
from app.rooms.errors import RoomError
from app.rooms.events import room_event
from app.rooms.membership import Membership
from app.rooms.table import BOT_FILL_GAMES, Table
from app.rooms.waits import Waits
from app.store.records import (
    Fenced,
    GameRecord,
    PlayerRecord,
    Records,
    RoomRecord,
    new_game_ref,
)

log = logging.getLogger(__name__)

#: the game whose rooms keep a series tally, and its points per place
TALLY_GAME = "bigtwo"
TALLY_POINTS = (3, 2, 1, 0)


def add_to_tally(tally: dict[str, int], seats: list[str], result: dict[str, Any]) -> None:
    """A finished game's series points, by place (tied seats each get the
    points of the place they share)."""
    rank = 0
    for group in result.get("places", []):
        points = TALLY_POINTS[rank] if rank < len(TALLY_POINTS) else 0
        for seat in group:
            pid = seats[seat]
            tally[pid] = tally.get(pid, 0) + points
        rank += len(group)


class Dealer:
    def __init__(
        self,
        code: str,
        games: Mapping[str, Game[Any]],
        records: Records,
        members: Membership,
        table: Table,
        delivery: Delivery,
        waits: Waits,
        *,
        seeds: Callable[[], int],
        save: Callable[[], Awaitable[None]],
        change: Callable[[list[Event]], None],
    ) -> None:
        self.code = code
        self.games = games
        self.records = records
        self.members = members
        self.table = table
        self.delivery = delivery
        self.waits = waits
        #: each game's seed (seeded in tests)
        self.seeds = seeds
        #: the room's own steps: saving its people, and telling everyone
        self.save = save
        self.change = change

    @property
    def record(self) -> RoomRecord:
        return self.members.record

    async def repair_tally(self) -> None:
        """The series tally is derived from the room's finished games, so a
        rebuild makes it again from them: a crash between a game's result and
        the room's next save would otherwise lose that game's points for good,
        and a save made after a result that failed to store would count them
        twice once the game is finished again.  If the games cannot be read,
        the rebuild fails (and is tried again at the next use): a room rebuilt
        on the stored tally would add its next games to a stale one."""
        finished = await self.records.finished_results(self.code, TALLY_GAME)
        tally: dict[str, int] = {}
        for game in finished:
            add_to_tally(tally, game.seats, game.result)
        self.record.tally = tally

    async def restore_game(self, rec: GameRecord) -> None:
        """Rebuild the live game (recovery after a restart), and repair what a
        crash may have left out: a game that is over is finished now (its
        result stored, the room between games); missing score rows are written."""
        game = self.games[rec.game]
        for i, pid in enumerate(rec.seats):
            if pid not in self.members.players:
                self.members.add_ghost(pid, i)
        self.members.seat_to(list(rec.seats))
        await self.table.restore(rec, game)
        await self.table.repair()
        result = self.table.over()
        if result is not None:
            await self.finish(result, [])
        self.waits.reschedule()

    async def finish(self, result: dict[str, Any], events: list[Event]) -> None:
        """A game is over: its result stored and tallied, the room between games."""
        table = self.table
        await table.finish(result)
        names = self.members.names
        table.result_names = [names.get(pid, "?") for pid in table.game_seats]
        if table.game.name == TALLY_GAME:
            add_to_tally(self.record.tally, table.game_seats, result)
        self.members.grow(table.game.max_seats)
        await self.save()
        events.append(room_event("finished", result=result))
        log.info("room %s: game %s of %s over", self.code, table.public_id, table.game.name)

    async def start(self) -> None:
        """Deal a new game to the seated people (and bots)."""
        game, members = self.table.game, self.members
        await self.table.repair()  # the last game's result, if its write failed
        if self.table.result_unsaved is not None:
            # the series tally and the history are made of stored results: a
            # game whose result cannot be stored yet holds the next one back
            raise RoomError("storage_error", "the last game could not be saved yet; try again")
        seated = [pid for pid in members.seats if pid is not None]
        added: list[PlayerRecord] = []
        if game.name in BOT_FILL_GAMES:
            while len(seated) + len(added) < game.max_seats:
                added.append(members.new_bot(len(seated) + len(added)))
        order = seated + [b.player_id for b in added]
        if len(order) < game.min_seats:
            raise RoomError(
                "too_few_players", f"{game.title} needs at least {game.min_seats} seated players"
            )
        if len(order) > game.max_seats:
            raise RoomError("bad_seat", f"{game.title} seats at most {game.max_seats}")
        seed = self.seeds()
        try:
            # every option stored with the game, defaults and rules version too:
            # it replays under what it was played by, whatever later code says
            options = game.parse_options(self.record.options).model_dump(mode="json")
            state = game.new_game(len(order), options, seed)
        except ValueError as err:
            raise RoomError("bad_options", str(err)) from None
        public_id = new_game_ref()
        try:
            game_id = await self.records.start_game(
                self.code, game.name, options, seed, order, self.table.epoch, public_id
            )
        except Fenced as err:
            raise RoomError("moved", "this room moved to another server: reconnecting") from err
        except Exception as err:
            log.exception("room %s: could not record a new game", self.code)
            raise RoomError("storage_error", "the game could not be saved; try again") from err
        for bot in added:
            members.add_bot(bot, None)
        members.seat_to(order)
        self.table.begin(order, seed, state, game_id, public_id)
        logs.in_room(self.code, public_id)
        log.info("room %s: game %s of %s started", self.code, public_id, game.name)
        self.delivery.restart_history()
        self.waits.stop()
        await self.save()
        self.waits.reschedule()
        self.change([room_event("started", game_no=self.table.games_played, game=game.name)])
