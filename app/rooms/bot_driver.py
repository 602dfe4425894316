"""Who drives a seat that no person plays, and how: bots' moves, their
thinking off the loop, their retries, and the quiet passes the room makes for
people not asked about a Posso window.

`BotDriver` is one room's.  It holds the room's fixed parts (the table, the
people, the waits) and calls back into the room for what only the room does:
a move under the room's lock (`play`), what a committed move ends
(`moved_on`), and stepping down when storage names a newer owner
(`check_moved`).  Its waits run through the room's `Timers`, so under the
room's lock like every other change.  The room's `reschedule` asks it which
seats a bot drives (`bot_drives`) and how soon it moves (`pace`), and starts
the `bot:<seat>` and `quiet` waits with its callbacks (`on_bot`, `on_quiet`).

"Play my turns this hand" (the `autoplay` command, app/rooms/commands.py) is
a seat the bot drives while its person is connected: the table's `autoplay`,
ended by the person (one tap) or by the end of the hand (`hand_over`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

from app.bots import DEFAULT_LEVEL, LEVELS
from app.bots.thinking import Job, Thinker, heuristic_move
from app.games.base import Event, IllegalAction
from app.rooms.clock import Clock
from app.rooms.errors import RoomError
from app.rooms.events import room_event
from app.rooms.membership import Membership
from app.rooms.quiet import QuietPosso
from app.rooms.settings import FASTEST_BOT_DELAY
from app.rooms.table import Table
from app.rooms.timers import Backoff, Timer, Timers

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Thought:
    """A bot thinking off the loop: its job, the answer to come, and the wait
    in its seat's bot slot."""

    job: Job
    pending: asyncio.Future[dict[str, Any] | None]
    waiting: Timer


class BotDriver:
    def __init__(
        self,
        code: str,
        table: Table,
        members: Membership,
        timers: Timers,
        quiet: QuietPosso,
        clock: Clock,
        *,
        play: Callable[[int | None, dict[str, Any]], Awaitable[None]],
        moved_on: Callable[[list[Event]], Awaitable[None]],
        check_moved: Callable[[Exception], bool],
        thinker: Thinker,
        jitter: random.Random,
        retry: Backoff,
    ) -> None:
        self.code = code
        self.table = table
        self.members = members
        self.timers = timers
        self.quiet = quiet
        self.clock = clock
        #: the room's own steps: a move under its lock, what a committed move
        #: ends, and stepping down for a newer owner
        self.play = play
        self._moved_on = moved_on
        self._check_moved = check_moved
        #: where bots that search think (the app's process pool; at once in tests)
        self.thinker = thinker
        #: bots thinking now, by seat
        self._thoughts: dict[int, Thought] = {}
        #: the room's: bots' delays and retries are seeded in tests, and a
        #: failed move of any kind backs the next retry off
        self._jitter = jitter
        self._retry = retry

    def bot_drives(self, seat: int) -> bool:
        p = self.members.players.get(self.table.game_seats[seat])
        return p is None or p.is_bot or self.table.stand_in(seat) or seat in self.table.autoplay

    def pace(self, delay: float) -> float:
        """The bot delay in effect, given the room's (`bot_delay`): the
        fastest (FASTEST_BOT_DELAY) once a person has handed their turns to
        the bot for the hand and no seat is left that its own person plays -
        nobody is waiting to see the moves; else the room's."""
        table = self.table
        if self.asked() and all(self.bot_drives(s) for s in range(len(table.game_seats))):
            return FASTEST_BOT_DELAY
        return delay

    def asked(self) -> list[int]:
        """The seats on "play my turns this hand" that a person still holds
        (one who left or was removed since is a bot's now, at the room's pace)."""
        players, seats = self.members.players, self.table.game_seats
        return [
            s
            for s in sorted(self.table.autoplay)
            if (p := players.get(seats[s])) is not None and not p.is_bot
        ]

    def release(self, seat: int) -> None:
        """The seat's person plays it again: a bot's wait or thought for it is dropped."""
        self._drop_thought(seat)
        self.timers.drop(f"bot:{seat}")

    def hand_over(self, events: list[Event]) -> list[Event]:
        """ "Play my turns this hand" ends with the hand (a move's public
        `hand_ended`; a game of one deal ends it with the game, in
        `Table.finish`): each seat's person plays their own turns again,
        and the table is told."""
        table = self.table
        if not table.autoplay or not any(
            ev.get("type") == "hand_ended" and ev.get("to") is None for ev in events
        ):
            return []
        out = []
        for seat in sorted(table.autoplay):
            name = self.members.names.get(table.game_seats[seat], "?")
            out.append(room_event("autoplay_off", seat=seat, name=name, reason="hand_over"))
            self.release(seat)
        table.autoplay.clear()
        return out

    def bot_level(self, seat: int) -> str:
        """How the bot driving `seat` plays: as the host chose for a bot of
        the room's; at normal when it stands in for a person (away, out of
        time, or gone)."""
        p = self.members.players.get(self.table.game_seats[seat])
        if p is None or not p.is_bot or self.table.stand_in(seat):
            return DEFAULT_LEVEL
        # a level this release does not know (stored by a newer one): normal
        return p.bot_level if p.bot_level in LEVELS else DEFAULT_LEVEL

    async def on_bot(self, t: Timer) -> None:
        assert t.seat is not None
        await self._bot_turn(t.seat)

    async def _bot_turn(self, seat: int) -> None:
        if not self.table.playing or not self.bot_drives(seat):
            return
        if self.table.unsettled:  # think about the game as it is, not as it was
            try:
                earlier = await self.table.settle()
            except RoomError as err:
                return self._retry_bot(seat, err)
            if earlier:
                await self._moved_on(earlier)  # the waits are set again for it
                return
        level = self.bot_level(seat)
        if self.thinker.searches(self.table.game.name, level):
            await self._think(seat, level)
            return
        move = self.table.bot_move(seat, level)
        if move is None:
            return
        await self._play_bot(seat, *move)

    async def _play_bot(self, seat: int, action: dict[str, Any], fallback: dict[str, Any]) -> None:
        try:
            try:
                await self.play(seat, action)
            except IllegalAction as err:
                log.error("room %s: bot move %r refused (%s); trying %r", self.code, action, err,
                          fallback)  # fmt: skip
                if action == fallback:
                    raise
                await self.play(seat, fallback)
        except RoomError as err:
            self._retry_bot(seat, err)

    def quiet_passes(self) -> list[int]:
        """The seats the room passes for now (app/rooms/quiet.py): when the
        window waits only on people who are not asked about its card, so it
        closes as soon as everyone asked has answered."""
        table = self.table
        if not self.quiet.anyone or not table.to_act:
            return []
        if table.game.timer(table.state) != "posso_window":
            return []
        seats = sorted(table.to_act)
        for seat in seats:
            pid = table.game_seats[seat]
            if self.bot_drives(seat) or self.quiet.asked(
                pid, table.games_played, table.state, seat
            ):
                return []
        return seats

    async def on_quiet(self, t: Timer) -> None:
        """Pass for the people not asked, through the engine like any move.
        A pass whose write had no answer is settled first, as a bot's move
        is: if it landed after all, the window it passed in may be closed,
        and the passes due are judged again from the game as it is."""
        while self.table.playing and (self.table.unsettled or (seats := self.quiet_passes())):
            try:
                if self.table.unsettled:
                    earlier = await self.table.settle()
                    if earlier:
                        await self._moved_on(earlier)  # the waits are set again for it
                        return
                    continue
                await self.play(seats[0], {"type": "pass_posso"})
            except IllegalAction:
                log.exception("room %s: quiet pass refused", self.code)
                return
            except RoomError as err:
                if self._check_moved(err):
                    return
                delay = self._retry.next(self._jitter)
                log.error("room %s: quiet pass failed (%s); again in %.1f s", self.code, err,
                          delay)  # fmt: skip
                key = self.table.seq
                self.timers.start("quiet", "quiet", self.clock() + delay, self.on_quiet, key=key)
                return

    async def _think(self, seat: int, level: str) -> None:
        """A bot that searches thinks off the loop and outside the lock
        (app/bots/thinking.py): the job goes to the thinker, and the seat's
        bot slot waits for the answer (`_on_thought`) until the thinker's
        deadline (`_on_think_deadline`).  Meanwhile the room goes on: people
        act, and the slot being taken keeps `reschedule` from starting
        another wait for this seat.  With the thinker's queue full, or a
        forced move, the bot plays at once."""
        job = self.table.bot_job(seat, level, self.thinker.cap)
        if job is None:
            return
        fallback = job.legal[0]
        pending = self.thinker.submit(job) if len(job.legal) > 1 else None
        if pending is None:  # nothing to think about, or no room to think: at once
            action = job.legal[0] if len(job.legal) == 1 else heuristic_move(job)
            await self._play_bot(seat, action, fallback)
            return
        self._drop_thought(seat)
        slot = f"bot:{seat}"
        waiting = self.timers.start(
            slot,
            "think",
            self.clock() + self.thinker.deadline,
            self._on_think_deadline,
            key=("think", job.seq),
            seat=seat,
        )
        self._thoughts[seat] = Thought(job, pending, waiting)
        pending.add_done_callback(lambda _: self._thought_done(seat, waiting))

    def _thought_done(self, seat: int, waiting: Timer) -> None:
        """An answer came (or the search failed): the seat's slot, if it still
        waits for it, runs `_on_thought` now, under the lock."""
        thought = self._thoughts.get(seat)
        if thought is None or thought.waiting is not waiting:
            return
        if self.timers.get(f"bot:{seat}") is not waiting:  # dropped meanwhile
            self._drop_thought(seat)
            return
        key = ("thought", thought.job.seq)
        self.timers.start(f"bot:{seat}", "thought", self.clock(), self._on_thought, key=key,
                          seat=seat)  # fmt: skip

    def _take_thought(self, t: Timer) -> Thought | None:
        """The thought a `think` or `thought` wait was for (once; None if the
        seat's thought now is another)."""
        assert t.seat is not None
        thought = self._thoughts.get(t.seat)
        if thought is None or t.key != (t.kind, thought.job.seq):
            return None
        return self._thoughts.pop(t.seat)

    async def _on_thought(self, t: Timer) -> None:
        thought = self._take_thought(t)
        if thought is None:
            return
        pending = thought.pending
        failed = pending.exception() if not pending.cancelled() else None
        if failed is not None:  # the worker died, or the search failed
            log.error("room %s: a bot's search failed (%r); it plays its heuristic move",
                      self.code, failed)  # fmt: skip
        ok = not pending.cancelled() and failed is None
        await self._act_on(thought, pending.result() if ok else None)

    async def _on_think_deadline(self, t: Timer) -> None:
        thought = self._take_thought(t)
        if thought is None:
            return
        thought.pending.cancel()  # still queued: it leaves the queue
        log.warning("room %s: a bot's search gave no answer in %.1f s; it plays its heuristic "
                    "move", self.code, self.thinker.deadline)  # fmt: skip
        await self._act_on(thought, None)

    async def _act_on(self, thought: Thought, action: dict[str, Any] | None) -> None:
        """Play what a bot thought of - if the game is where it was when the
        bot began (same `seq`); else the bot thinks again about the game as it
        is.  No answer (a search stopped, failed or late): the heuristic's."""
        job = thought.job
        seat = job.seat
        table = self.table
        if not table.playing or not self.bot_drives(seat) or seat not in table.to_act:
            return
        if job.seq != table.seq or table.unsettled:
            await self._bot_turn(seat)
            return
        await self._play_bot(seat, action if action is not None else heuristic_move(job),
                             job.legal[0])  # fmt: skip

    def drop_thoughts(self) -> None:
        """Every bot's thinking dropped (the room drops every wait)."""
        for seat in list(self._thoughts):
            self._drop_thought(seat)

    def _drop_thought(self, seat: int) -> None:
        thought = self._thoughts.pop(seat, None)
        if thought is not None:
            thought.pending.cancel()

    def _retry_bot(self, seat: int, err: RoomError) -> None:
        """Storage trouble: the bot tries again later and later."""
        if self._check_moved(err):
            return
        delay = self._retry.next(self._jitter)
        log.error("room %s: bot move failed (%s); again in %.1f s", self.code, err, delay)
        slot, seq = f"bot:{seat}", self.table.seq
        self.timers.start(slot, "bot", self.clock() + delay, self.on_bot, key=seq, seat=seat)
