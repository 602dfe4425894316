"""Everything a room sends, and to whom: sockets, versions, recent history,
resync.  The only reader of the views that are sent (bots read theirs
through `Table`).

`change` is the single choke point.  It stamps the next version, addresses
each event to the seat it names (never further), builds each connected
recipient's view from the engine's `view(state, seat)` - encoded once per seat,
not per socket - and queues the frames on the connections without waiting for
any socket.  Event frames are kept for a while (`history`), so a client that
lost its socket resumes with `since` and gets exactly what it missed, filtered
by its seat again.

Versions count from 0 in each incarnation of the room: each time it is built
in a process (made, or rebuilt after a restart or by another process taking it
over).  A version means nothing without its incarnation's random id, which
every view carries (`inc`), so a resume names both (`Resume`): one from
another incarnation gets a full view, never that incarnation's events under
numbers that happen to match.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from app.bots import DEFAULT_LEVEL
from app.games.base import Event
from app.rooms import story
from app.rooms.connection import Connection
from app.rooms.membership import SEAT_LINK_FLOOR, Membership
from app.rooms.quiet import QuietPosso
from app.rooms.settings import RoomSettings
from app.rooms.table import PLAYING, Table
from app.store.records import PlayerRecord

#: event-bearing changes kept for clients resuming with `since`
HISTORY_MAX = 256

Frame = str
_dumps = orjson.dumps


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a reconnecting tab left off: the room's incarnation and the last
    version it saw there (docs/protocol.md, "Versions")."""

    incarnation: str
    v: int


class Delivery:
    def __init__(
        self,
        code: str,
        members: Membership,
        table: Table,
        settings: Callable[[], RoomSettings],
        timer: Callable[[], dict[str, Any] | None],
        quiet: QuietPosso,
    ) -> None:
        self.code = code
        self.members = members
        self.table = table
        self._settings = settings
        self._timer = timer
        self._quiet = quiet
        self.v = 0
        #: this incarnation of the room (see the module's docstring)
        self.incarnation = secrets.token_hex(6)
        #: (v, ((to, frame), ...)) per change with events; tuples of strings and
        #: ints only, which the garbage collector does not track
        self.history: deque[tuple[int, tuple[tuple[int | None, Frame], ...]]] = deque()
        self.history_floor = 0
        self.conns: dict[str, list[Connection]] = {}
        #: the encoded room part of views (None: to be encoded again)
        self._room_json: str | None = None
        #: each person's encoded "you" part, valid as long as `_room_json`
        self._you_json: dict[str, str] = {}
        #: the game state whose public view part (Game.public_view) is
        #: encoded here: states are never changed, only replaced
        self._public: tuple[object, str | None] | None = None
        #: each seat's own game part (Game.seat_view), encoded without its
        #: closing brace, with the game and the key it was encoded for
        #: (Game.seat_view_key): kept while the key stays the same object
        self._mine: dict[int | None, tuple[object, object, str]] = {}

    # ---------------------------------------------------------------- sockets

    def add(self, conn: Connection, resume: Resume | None) -> bool:
        """Register `conn` and queue the events it missed since `resume` (when
        still kept, and in this incarnation) - for a new tab during a game, the
        game's story so far, so its log is not empty; True if it is its
        person's first socket."""
        conns = self.conns.setdefault(conn.player_id, [])
        conns.append(conn)
        since: int | None = None
        if resume is None and self.table.status == PLAYING:
            since = self.history_floor
        elif resume is not None and resume.incarnation == self.incarnation:
            since = resume.v
        if since is not None and self.history_floor <= since <= self.v:
            # one page of it at most: a long game's whole story was more than
            # a socket may queue, and dropped the socket as it joined
            told = story.page(self.history, self.table.game_seat.get(conn.player_id), since=since)
            if told.before is not None:
                conn.push(story.more_frame(told.before))
            conn.push_all(told.frames)
        return len(conns) == 1

    def older(self, conn: Connection, before: int) -> dict[str, Any]:
        """A page of the kept events older than `before` that `conn`'s seat
        may see (the `story` command): the log asks for it when scrolled back."""
        told = story.page(
            self.history, self.table.game_seat.get(conn.player_id), since=0, before=before
        )
        return {"events": [orjson.loads(f) for f in told.frames], "before": told.before}

    def remove(self, conn: Connection) -> bool:
        """Forget `conn`; True if it was its person's last socket."""
        conns = self.conns.get(conn.player_id)
        if conns is None or conn not in conns:
            return False
        conns.remove(conn)
        if conns:
            return False
        del self.conns[conn.player_id]
        return True

    def close_person(self, pid: str, code: int, reason: str) -> None:
        for c in self.conns.pop(pid, []):
            c.close(code, reason)

    def close_all(self, code: int, reason: str) -> None:
        for pid in list(self.conns):
            self.close_person(pid, code, reason)

    def send_view(self, conn: Connection) -> None:
        """`conn`'s person's current view, whole (a resync, or a second tab)."""
        conn.room_seen = None
        player = self.members.players[conn.player_id]
        conn.push(self._view_frame(player, conn, {}, self._timer_part()))

    def personal_changed(self, pid: str) -> None:
        """Something only `pid` may know changed (their Posso switches): their
        own sockets get their view again, at the same version; nobody else is
        sent anything, so nobody else can tell."""
        self._you_json.pop(pid, None)
        for conn in self.conns.get(pid, []):
            self.send_view(conn)

    def restart_history(self) -> None:
        """A new game: what was said about the last one no longer resumes."""
        self.history.clear()
        self.history_floor = self.v

    # ----------------------------------------------------------------- change

    def change(
        self, events: list[Event], *, with_view: bool = True, room_changed: bool = True
    ) -> None:
        """The one way anything reaches anyone: a new version, each event to the
        seat it names (or to all), then each connected person's own view.
        `room_changed=False` (a plain game move) reuses the encoded room part."""
        self.v += 1
        v = self.v
        if room_changed:
            self._room_json = None
        frames: list[tuple[int | None, Frame]] = []
        for ev in events:
            body = dict(ev)
            to = body.pop("to", None)
            frames.append((to, _dumps({"v": v, "event": body}).decode()))
        if frames:
            if len(self.history) >= HISTORY_MAX:
                self.history_floor = self.history.popleft()[0]
            self.history.append((v, tuple(frames)))
        if with_view:
            cache: dict[int | None, tuple[str, str]] = {}
            room = self._room_part()
            lead = self._lead()
            tail = f',"timer":{self._timer_part()}}}}}'
        players = self.members.players
        game_seat = self.table.game_seat
        # the usual change tells everyone the same events: one list for all
        everyone = [frame for to, frame in frames if to is None]
        shared = everyone if len(everyone) == len(frames) else None
        for pid, conns in self.conns.items():
            seat = game_seat.get(pid)
            out = (
                shared
                if shared is not None
                else [frame for to, frame in frames if to is None or to == seat]
            )
            for c in conns:
                if with_view:
                    view = self._view(players[pid], seat, c, cache, lead, room, tail)
                    c.push_all([*out, view])
                else:
                    c.push_all(out)

    # ------------------------------------------------------------------ views

    def room_public(self) -> dict[str, Any]:
        """The room as everyone may see it (lobby page, every view)."""
        members, table = self.members, self.table
        playing = table.status == PLAYING
        # an away host hands the role on then, to someone here (with nobody
        # here, to the next who comes: no countdown)
        host_ends = members.host_grace_ends(playing)
        passes_ms = (
            int(host_ends * 1000) if host_ends is not None and members.heir() is not None else None
        )
        seats: list[dict[str, Any] | None] = []
        for i, pid in enumerate(members.seats):
            if pid is None:
                seats.append(None)
                continue
            p = members.players[pid]
            away = members.away_since.get(pid) if playing else None
            ends = members.grace_ends(pid) if playing else None
            auto = playing and table.stand_in(i)
            seats.append(
                {
                    "player": pid,
                    "name": p.name,
                    "bot": p.is_bot,
                    # how a bot plays (a person who left plays on as a normal bot)
                    "level": (p.bot_level or DEFAULT_LEVEL) if p.is_bot else None,
                    "auto": auto,
                    # its person asked the bot to play their turns this hand
                    "autoplay": playing and i in table.autoplay and not p.is_bot,
                    "connected": p.is_bot or members.connected(pid),
                    "host": pid == members.host,
                    "away_since_ms": int(away * 1000) if away is not None else None,
                    # when the grace ends: a bot takes over (settings.auto_bot), or
                    # anyone seated may hand the seat to one
                    # (the person's own: fixed when they went)
                    "grace_ends_ms": int(ends * 1000) if ends is not None else None,
                    # from when a seat link may be made for the seat: the
                    # grace, and never sooner than SEAT_LINK_FLOOR
                    "link_ms": int(max(ends, away + SEAT_LINK_FLOOR) * 1000)
                    if ends is not None and away is not None
                    else None,
                    "host_passes_ms": passes_ms if pid == members.host else None,
                }
            )
        watchers = [
            p for p in members.humans() if p.seat is None and members.connected(p.player_id)
        ]
        watching = [p.name for p in watchers]
        ranked = sorted(members.record.tally.items(), key=lambda kv: -kv[1])
        tally = [
            {"player": pid, "name": members.names.get(pid, "?"), "points": pts}
            for pid, pts in ranked
        ]
        game = table.game
        return {
            "code": self.code,
            "game": game.name,
            "title": game.title,
            "options": members.record.options,
            "settings": members.record.settings,
            "status": table.status,
            "min_seats": game.min_seats,
            "max_seats": game.max_seats,
            "seats": seats,
            "spectators": len(watching),
            "spectator_names": watching,
            # ids too, so the host can remove a spectator (kick {"player": id})
            "watchers": [{"player": p.player_id, "name": p.name} for p in watchers],
            # people the host removed: the host may let them back in (let_in)
            "removed": [
                {"player": pid, "name": r.name} for pid, r in members.record.removed.items()
            ],
            "games_played": table.games_played,
            # the game being played, or the last one: its page is /#game/<id>
            "game_id": table.public_id,
            "tally": tally,
            "result": table.result,
            "result_names": table.result_names if table.result is not None else None,
        }

    def _room_part(self) -> str:
        """The room part of a view, encoded; the same object until the room changes."""
        part = self._room_json
        if part is None:
            part = self._room_json = _dumps(self.room_public()).decode()
            self._you_json.clear()
        return part

    def _timer_part(self) -> str:
        return _dumps(self._timer()).decode()

    def _game_part(self, seat: int | None) -> str:
        """The seat's game view, encoded: its own part, and the part every
        seat shares (Game.public_view) encoded once per state."""
        game, state = self.table.game, self.table.state
        kept = self._public
        if kept is None or kept[0] is not state:
            public = game.public_view(state)
            kept = self._public = (state, None if public is None else _dumps(public).decode())
        common = kept[1]
        if common is None:
            return _dumps(game.view(state, seat)).decode()
        key = game.seat_view_key(state, seat)
        mine = self._mine.get(seat)
        if mine is None or mine[0] is not game or mine[1] is not key:
            # encoded without its closing brace: a seat's own part names its seat
            own = _dumps(game.seat_view(state, seat)).decode()[:-1]
            mine = self._mine[seat] = (game, key, own)
        return f"{mine[2]}}}" if common == "{}" else f"{mine[2]},{common[1:]}"

    def _view_frame(
        self,
        player: PlayerRecord,
        conn: Connection,
        cache: dict[int | None, tuple[str, str]],
        timer: str,
    ) -> Frame:
        """`player`'s view, for `conn`, whole or (on a batching socket) without
        a room part it already holds: see `_view`."""
        seat = self.table.game_seat.get(player.player_id)
        tail = f',"timer":{timer}}}}}'
        return self._view(player, seat, conn, cache, self._lead(), self._room_part(), tail)

    def _lead(self) -> str:
        """What every view of this version starts with."""
        return f'{{"v":{self.v},"inc":"{self.incarnation}","view":{{'

    def _view(
        self,
        player: PlayerRecord,
        seat: int | None,
        conn: Connection,
        cache: dict[int | None, tuple[str, str]],
        lead: str,
        room: str,
        tail: str,
    ) -> Frame:
        """`player`'s view, for `conn`, put together from parts encoded once
        (the room, each person's "you", each seat's game view and legal moves,
        the timer; a change makes `lead`, `room` and `tail` once for all its
        views).  A batching socket that already holds the current room
        part gets the view without it (docs/protocol.md): during a game the
        room part is two thirds of a view and rarely changes."""
        parts = cache.get(seat)
        if parts is None:
            table = self.table
            if table.state is None:
                parts = ("null", "null")
            else:
                game = self._game_part(seat)
                legal = "null"
                if seat is not None and table.status == PLAYING and seat in table.to_act:
                    legal = _dumps(table.game.legal_actions(table.state, seat)).decode()
                parts = (game, legal)
            cache[seat] = parts
        you = self._you_json.get(player.player_id)
        if you is None:  # kept until the room part changes (who sits where, the host)
            you = self._you_json[player.player_id] = _dumps(
                {
                    "seat": player.seat,
                    "host": player.player_id == self.members.host,
                    "name": player.name,
                    "player": player.player_id,
                    # this person's own switches, never in anyone else's view
                    "quiet": self._quiet.you(player.player_id, self.table.games_played),
                }
            ).decode()
        if conn.batch and conn.room_seen is room:
            return f'{lead}"you":{you},"game":{parts[0]},"legal":{parts[1]}{tail}'
        conn.room_seen = room
        return f'{lead}"room":{room},"you":{you},"game":{parts[0]},"legal":{parts[1]}{tail}'
