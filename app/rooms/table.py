"""The game on a room's table: the engine state, its action log, and who
drives each seat (a person, or a bot standing in).

The table is the only writer of game state.  `play` is the one way a move gets
in: the engine checks it (`apply` validates everything and raises
`IllegalAction` with nothing changed), the move is appended to the durable log,
and only then is the new state committed - so nothing anyone is told about can
be lost by a crash.  The room calls `play` under its lock, one action at a
time, and delivers the events it returns.

The log is the truth; everything else stored about a game is derived from it
(docs/architecture.md, "What survives a crash"): the result and the Posso
score rows are written after the move that makes them, and whatever a failed
write or a crash left out is written again from the state (`repair`), at the
next move, at the end of the game and whenever a game is rebuilt.  An append
whose answer was lost (the commit may or may not have happened) is settled by
reading that position of the log back - this very action, written with this
table's epoch, or not - never by guessing.

Every write carries the table's owner epoch, and one the records refuse
(`Fenced`: another process owns the room now) makes the room step down: a
refused append is the move's `moved` error (the room's caller steps down,
`Closing.check_moved`), a refused result, score row or snapshot calls
`on_fenced`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from time import perf_counter
from typing import Any

from app.bots import DEFAULT_LEVEL, bot_for
from app.bots.thinking import Job
from app.core import metrics
from app.games.base import Event, Game, IllegalAction
from app.games.cards import rng_for
from app.rooms import snapshots
from app.rooms.clock import Clock, system_clock
from app.rooms.errors import RoomError
from app.store.records import Fenced, GameRecord, Records

log = logging.getLogger(__name__)

LOBBY, PLAYING, FINISHED = "lobby", "playing", "finished"

#: the games whose rooms fill empty seats with bots at the start
BOT_FILL_GAMES = frozenset({"bigtwo"})


class Table:
    def __init__(
        self, game: Game[Any], records: Records, code: str, clock: Clock = system_clock
    ) -> None:
        self.game = game
        self.clock = clock
        self.records = records
        self.code = code
        self.status = LOBBY
        self.state: Any = None
        self.game_id: int | None = None
        #: the id pages show for it (views say `game_id`: app/rooms/delivery.py)
        self.public_id: str | None = None
        self.seed = 0
        self.seq = 0
        self.game_seats: list[str] = []  # player id per seat of the current/last game
        self.game_seat: dict[str, int] = {}
        self.result: dict[str, Any] | None = None
        #: the names the players of the last finished game had then, by seat:
        #: its result reads the same whoever sits or leaves later
        self.result_names: list[str] = []
        self.games_played = 0
        self.to_act: set[int] = set()
        #: seats a bot plays until their person comes back (away past the grace,
        #: or handed over by another player)
        self.auto: set[int] = set()
        #: seats whose turn timer ran out this turn (a bot plays just this turn)
        self.forced: set[int] = set()
        #: seats whose person, connected, asked the normal bot to play their
        #: turns until the hand ends ("play my turns this hand": see
        #: `BotDriver.hand_over`); kept in memory like `auto` and `forced`
        self.autoplay: set[int] = set()
        self.forced_key: frozenset[int] | None = None
        #: this process's owner epoch for the room (several processes; else 0):
        #: every append carries it, and the database refuses it once stale
        self.epoch = 0
        #: called when a write is refused for a newer owner (the room steps down)
        self.on_fenced: Callable[[], None] = _nothing
        #: wall-clock time of the last change to the game: its waits count from it
        self.changed_at = self.clock()
        #: derived records a write missed: the result, score rows (see `repair`)
        self.result_unsaved: tuple[int, dict[str, Any]] | None = None
        self.sheet_unsaved = False
        #: a move whose append had no answer: (seq, seat, action, state, events)
        self._unsettled: tuple[int, int | None, dict[str, Any], Any, list[Event]] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._bot_rngs: dict[int, random.Random] = {}
        #: what keys the bots' generators besides the seed and seat (a restored
        #: game's bots continue on new ones, keyed by the actions replayed)
        self._bot_salt: tuple[int, ...] = ()

    # ----------------------------------------------------------------- games

    def set_game(self, game: Game[Any]) -> None:
        self.game = game
        self.status = LOBBY
        self.state = None
        self.result = None
        self._set_seats([])

    def begin(self, order: list[str], seed: int, state: Any, game_id: int, public_id: str) -> None:
        self.state, self.seed, self.game_id, self.seq = state, seed, game_id, 0
        self.public_id = public_id
        self.changed_at = self.clock()
        self.sheet_unsaved = False
        self._unsettled = None
        self._set_seats(order)
        self.status = PLAYING
        self.result = None
        self.games_played += 1
        self.auto.clear()
        self.forced.clear()
        self.autoplay.clear()
        self._bot_rngs, self._bot_salt = {}, ()  # made when a bot first moves
        self.refresh()

    async def restore(self, rec: GameRecord, game: Game[Any]) -> None:
        """Rebuild the live game from its latest snapshot and the actions after
        it, or - with no snapshot this code can read - from the seed and the
        whole log (recovery after a restart)."""
        self.game = game
        state = snapshots.restore(game, rec.snapshot) if rec.snapshot is not None else None
        actions, start = rec.actions, rec.first_seq
        if state is None:
            state = game.new_game(len(rec.seats), game.stored_options(rec.options), rec.seed)
            if start:
                actions, start = await self.records.game_actions(rec.game_id), 0
        for seat, action in actions:
            state, _ = game.apply(state, seat, action)
        n = start + len(actions)
        self.state, self.seed, self.game_id, self.seq = state, rec.seed, rec.game_id, n
        # a game the release before public ids started has only its number
        self.public_id = rec.public_id or str(rec.game_id)
        self.changed_at = rec.last_at or self.clock()
        self.sheet_unsaved = True  # a crash may have come between a move and its row
        self._set_seats(list(rec.seats))
        self.status = PLAYING
        self.autoplay.clear()  # asked of the process that is gone: asked again here
        self._bot_rngs, self._bot_salt = {}, (n,)
        self.games_played = 1
        self.refresh()

    async def finish(self, result: dict[str, Any]) -> None:
        """The game is over: its result stored (or kept to store again), the
        table between games."""
        assert self.game_id is not None
        self.result_unsaved = (self.game_id, result)
        await self.repair()
        self.status = FINISHED
        self.result = result
        self.auto.clear()
        self.forced.clear()
        self.autoplay.clear()
        self.to_act = set()

    def stop(self) -> None:
        """The room closed: whatever was being played stops where it stands."""
        if self.status == PLAYING:
            self.status = FINISHED
        self.autoplay.clear()
        self.to_act = set()

    def _set_seats(self, seats: list[str]) -> None:
        self.game_seats = list(seats)
        self.game_seat = {pid: i for i, pid in enumerate(seats)}

    @property
    def playing(self) -> bool:
        return self.status == PLAYING

    def seat_of(self, pid: str) -> int | None:
        """`pid`'s seat in the game being played (None: not playing in it)."""
        return self.game_seat.get(pid) if self.status == PLAYING else None

    # ----------------------------------------------------------------- moves

    async def play(self, seat: int | None, action: dict[str, Any]) -> list[Event]:
        """Check with the engine, log durably, then commit; the engine's events.
        A move whose append had no answer must be settled first (`settle`)."""
        if self._unsettled is not None:
            raise RoomError("storage_error", "the game's log cannot be read; try again")
        try:
            state, events = self.game.apply(self.state, seat, action)
        except IllegalAction:
            raise  # the engine's own refusal, as it is
        except Exception as err:  # an engine that chokes on odd input must not kill the room
            log.exception("room %s: engine error on %r", self.code, action)
            raise RoomError("bad_action", "that action could not be understood") from err
        assert self.game_id is not None
        try:
            if not self.records.append_now(self.game_id, self.seq, seat, action, self.epoch):
                await self.records.append_action(self.game_id, self.seq, seat, action, self.epoch)
        except Fenced as err:
            log.warning("room %s: append refused, a newer owner exists (%s)", self.code, err)
            raise RoomError("moved", "this room moved to another server: reconnecting") from err
        except Exception as err:
            if not await self._landed(seat, action, state, events):
                log.exception("room %s: could not log action %d", self.code, self.seq)
                raise RoomError("storage_error", "the move could not be saved; try again") from err
        self.seq += 1
        derived = self.sheet_unsaved
        for ev in events:  # (a loop, not any(): no generator on every move)
            if ev.get("type") == "hand_ended":
                derived = True
                break
        if derived:
            await self._commit_derived(state, events)
        self._commit(state, events)
        return events

    def _commit(self, state: Any, events: list[Event]) -> None:
        self.state = state
        self.changed_at = self.clock()
        self.refresh()
        if self.seq % snapshots.SNAPSHOT_EVERY == 0:
            self._in_background(self._snapshot(self.seq, state))

    async def _landed(
        self, seat: int | None, action: dict[str, Any], state: Any, events: list[Event]
    ) -> bool:
        """Did the append that failed commit after all?  Read that position of
        the log back; if even that fails, remember the move and settle it first
        thing at the next one."""
        assert self.game_id is not None
        try:
            return await self._holds(self.seq, seat, action)
        except Exception:
            log.exception("room %s: could not tell whether action %d was logged", self.code,
                          self.seq)  # fmt: skip
            self._unsettled = (self.seq, seat, action, state, events)
            return False

    @property
    def unsettled(self) -> bool:
        """A move's append had no answer and the log could not be read since."""
        return self._unsettled is not None

    async def settle(self) -> list[Event]:
        """An earlier move whose outcome was unknown: if the log holds it, it
        happened (its state is committed now and its events returned, to be
        told before anything else); if not, it did not.  Until the log can be
        read, every move is refused."""
        pending = self._unsettled
        if pending is None:
            return []
        seq, seat, action, state, events = pending
        assert self.game_id is not None
        try:
            landed = await self._holds(seq, seat, action)
        except Exception as err:
            raise RoomError("storage_error", "the game's log cannot be read; try again") from err
        self._unsettled = None
        if not landed:
            return []
        log.warning("room %s: action %d was logged after all", self.code, seq)
        self.seq = seq + 1
        await self._commit_derived(state, events)
        self._commit(state, events)
        return events

    async def _holds(self, seq: int, seat: int | None, action: dict[str, Any]) -> bool:
        """Does the log hold this very action at `seq`, written by this owner?
        Not merely a row there: after a takeover a newer owner's row may sit at
        that position, and announcing this move then would tell people of a
        move the log does not have."""
        assert self.game_id is not None
        stored = await self.records.action_at(self.game_id, seq)
        if stored is None:
            return False
        s_seat, s_action, s_epoch = stored
        return s_seat == seat and s_action == action and s_epoch in (None, self.epoch)

    def _write_failed(self, err: Exception, what: str) -> None:
        """A derived write failed: `repair` writes it later - unless a newer
        owner refused it, when this process steps down instead."""
        if isinstance(err, Fenced):
            log.warning("room %s: %s refused, a newer owner exists (%s)", self.code, what, err)
            self.on_fenced()
            return
        log.error("room %s: could not store %s", self.code, what, exc_info=err)

    async def _commit_derived(self, state: Any, events: list[Event]) -> None:
        """Store the score rows a move made (and any an earlier write missed)."""
        assert self.game_id is not None
        for ev in events:
            if ev.get("type") == "hand_ended" and ev.get("to") is None:
                try:
                    await self.records.save_score_hand(
                        self.game_id, int(ev["hand"]), dict(ev.get("row") or {}), self.epoch
                    )
                except Exception as err:  # derived from the log: `repair` writes it later
                    self._write_failed(err, "a score row")
                    self.sheet_unsaved = True
        if self.sheet_unsaved:
            await self._repair_sheet(state)

    async def repair(self) -> None:
        """Write whatever derived records are missing: a result, score rows."""
        if self.sheet_unsaved and self.state is not None:
            await self._repair_sheet(self.state)
        if self.result_unsaved is not None:
            game_id, result = self.result_unsaved
            try:
                await self.records.finish_game(game_id, result, self.epoch)
                self.result_unsaved = None
            except Exception as err:
                self._write_failed(err, f"the result of game {game_id}")

    async def _repair_sheet(self, state: Any) -> None:
        assert self.game_id is not None
        rows = self.game.score_rows(state)
        try:
            if rows:
                have = await self.records.score_hands(self.game_id)
                for row in rows:
                    if int(row["hand"]) not in have:
                        await self.records.save_score_hand(
                            self.game_id, int(row["hand"]), row, self.epoch
                        )
            self.sheet_unsaved = False
        except Exception as err:
            self._write_failed(err, "the score sheet")

    async def _snapshot(self, seq: int, state: Any) -> None:
        assert self.game_id is not None
        try:
            await self.records.save_snapshot(
                self.game_id, snapshots.take(self.game, seq, state), self.epoch
            )
        except Exception as err:  # only a shortcut: a rebuild without it replays more
            self._write_failed(err, "a snapshot")

    def _in_background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._background.discard)

    def refresh(self) -> None:
        """Bring `to_act` in line with the state; a turn timer's stand-in bots
        stop once the table waits on someone else."""
        self.to_act = self.game.to_act(self.state) if self.status == PLAYING else set()
        if self.forced and frozenset(self.to_act) != self.forced_key:
            self.forced.clear()
            self.forced_key = None

    def over(self) -> dict[str, Any] | None:
        return self.game.result(self.state) if self.status == PLAYING else None

    # ------------------------------------------------------------------ bots

    def stand_in(self, seat: int) -> bool:
        """A bot plays `seat` for its person, now."""
        return seat in self.auto or seat in self.forced

    def bot_move(
        self, seat: int, level: str = DEFAULT_LEVEL
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The choice of a bot at `level` for `seat` and a safe fallback, or
        None if the seat has nothing to do."""
        if self.status != PLAYING or seat not in self.to_act:
            return None
        legal = self.game.legal_actions(self.state, seat)
        if not legal:
            return None
        rng = self._bot_rng(seat)
        started = perf_counter()
        try:
            action = bot_for(self.game.name, level).choose(
                self.game.view(self.state, seat), legal, seat, rng
            )
        except Exception:
            log.exception("room %s: bot failed; playing a legal action", self.code)
            action = legal[0]
        metrics.since(metrics.BOT_SECONDS.labels(level), started)
        return action, legal[0]

    def bot_job(self, seat: int, level: str, cap: float) -> Job | None:
        """What a bot that thinks off the loop needs for `seat` (None if the
        seat has nothing to do): its view, its legal actions, and a seed
        drawn from the seat's generator, as `bot_move` would use it; it may
        search for `cap` seconds."""
        if self.status != PLAYING or seat not in self.to_act:
            return None
        legal = self.game.legal_actions(self.state, seat)
        if not legal:
            return None
        seed = self._bot_rng(seat).getrandbits(64)
        view = self.game.view(self.state, seat)
        return Job(self.game.name, level, view, legal, seat, seed, self.seq, cap)

    def _bot_rng(self, seat: int) -> random.Random:
        rng = self._bot_rngs.get(seat)
        if rng is None:
            rng = self._bot_rngs[seat] = rng_for(self.seed, "bot", seat, *self._bot_salt)
        return rng


def _nothing() -> None:
    """One process: nobody else can own the room."""
