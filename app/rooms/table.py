"""The game on a room's table: the engine state, its action log, and who
drives each seat (a person, or a bot standing in).

The table is the only writer of game state.  `play` is the one way a move gets
in: the engine checks it (`apply` validates everything and raises
`IllegalAction` with nothing changed), the move is appended to the durable log,
and only then is the new state committed - so nothing anyone is told about can
be lost by a crash.  The room calls `play` under its lock, one action at a
time, and delivers the events it returns.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from app.bots import bot_for
from app.games.base import Event, Game, IllegalAction
from app.games.cards import rng_for
from app.rooms.errors import RoomError
from app.store.records import GameRecord, Records

log = logging.getLogger(__name__)

LOBBY, PLAYING, FINISHED = "lobby", "playing", "finished"


class Table:
    def __init__(self, game: Game[Any], records: Records, code: str) -> None:
        self.game = game
        self.records = records
        self.code = code
        self.status = LOBBY
        self.state: Any = None
        self.game_id: int | None = None
        self.seed = 0
        self.seq = 0
        self.game_seats: list[str] = []  # player id per seat of the current/last game
        self.game_seat: dict[str, int] = {}
        self.result: dict[str, Any] | None = None
        self.games_played = 0
        self.to_act: set[int] = set()
        #: seats a bot plays until their person comes back (away past the grace,
        #: or handed over by another player)
        self.auto: set[int] = set()
        #: seats whose turn timer ran out this turn (a bot plays just this turn)
        self.forced: set[int] = set()
        self.forced_key: frozenset[int] | None = None
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

    def begin(self, order: list[str], seed: int, state: Any, game_id: int) -> None:
        self.state, self.seed, self.game_id, self.seq = state, seed, game_id, 0
        self._set_seats(order)
        self.status = PLAYING
        self.result = None
        self.games_played += 1
        self.auto.clear()
        self.forced.clear()
        self._bot_rngs, self._bot_salt = {}, ()  # made when a bot first moves
        self.refresh()

    def restore(self, rec: GameRecord, game: Game[Any]) -> None:
        """Rebuild the live game by replaying its log (recovery after a restart)."""
        self.game = game
        state = game.new_game(len(rec.seats), dict(rec.options), rec.seed)
        for seat, action in rec.actions:
            state, _ = game.apply(state, seat, action)
        n = len(rec.actions)
        self.state, self.seed, self.game_id, self.seq = state, rec.seed, rec.game_id, n
        self._set_seats(list(rec.seats))
        self.status = PLAYING
        self._bot_rngs, self._bot_salt = {}, (n,)
        self.games_played = 1
        self.refresh()

    def finish(self, result: dict[str, Any]) -> None:
        self.status = FINISHED
        self.result = result
        self.auto.clear()
        self.forced.clear()
        self.to_act = set()

    def stop(self) -> None:
        """The room closed: whatever was being played stops where it stands."""
        if self.status == PLAYING:
            self.status = FINISHED
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
        """Check with the engine, log durably, then commit; the engine's events."""
        try:
            state, events = self.game.apply(self.state, seat, action)
        except IllegalAction:
            raise
        except Exception as err:  # an engine that chokes on odd input must not kill the room
            log.exception("room %s: engine error on %r", self.code, action)
            raise RoomError("bad_action", "that action could not be understood") from err
        assert self.game_id is not None
        try:
            await self.records.append_action(self.game_id, self.seq, seat, action)
        except Exception as err:
            log.exception("room %s: could not log action %d", self.code, self.seq)
            raise RoomError("storage_error", "the move could not be saved; try again") from err
        self.state = state
        self.seq += 1
        for ev in events:
            if ev.get("type") == "hand_ended" and ev.get("to") is None:
                try:
                    await self.records.save_score_hand(
                        self.game_id, int(ev["hand"]), dict(ev.get("row") or {})
                    )
                except Exception:  # derived data: a replay can rebuild it
                    log.exception("room %s: could not save a score row", self.code)
        self.refresh()
        return events

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

    def bot_move(self, seat: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The bot's choice for `seat` and a safe fallback, or None if the seat
        has nothing to do."""
        if self.status != PLAYING or seat not in self.to_act:
            return None
        legal = self.game.legal_actions(self.state, seat)
        if not legal:
            return None
        rng = self._bot_rngs.get(seat)
        if rng is None:
            rng = self._bot_rngs[seat] = rng_for(self.seed, "bot", seat, *self._bot_salt)
        try:
            action = bot_for(self.game.name).choose(
                self.game.view(self.state, seat), legal, seat, rng
            )
        except Exception:
            log.exception("room %s: bot failed; playing a legal action", self.code)
            action = legal[0]
        return action, legal[0]
