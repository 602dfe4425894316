"""What each room command does, and who may do it (docs/protocol.md,
"Commands").  Each runs under the room's lock and refuses with a RoomError
before changing anything; one that changes the room ends in the room's one
`change` (a move link, a resync, an older page of the story and the quiet
Posso switches tell only the asker).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from app.bots import DEFAULT_LEVEL, LEVELS
from app.games.base import Event, Game
from app.rooms.bot_driver import BotDriver
from app.rooms.clock import Clock
from app.rooms.connection import Connection
from app.rooms.delivery import Delivery
from app.rooms.errors import RoomError
from app.rooms.events import CLOSE_KICKED, CLOSE_LEFT, room_event
from app.rooms.membership import SEAT_LINK_FLOOR, Membership
from app.rooms.quiet import QuietPosso
from app.rooms.settings import RoomSettings, parse_settings
from app.rooms.table import BOT_FILL_GAMES, FINISHED, Table
from app.rooms.text import clean_chat
from app.store.records import PlayerRecord, RoomRecord


class Room(Protocol):
    """The room as its commands see it (app/rooms/room.py's `Room` is one):
    named here, so that the room can run commands without the two modules
    importing each other."""

    members: Membership
    table: Table
    bots: BotDriver
    delivery: Delivery
    quiet: QuietPosso
    settings: RoomSettings
    settings_at: float
    games: Mapping[str, Game[Any]]
    clock: Clock

    @property
    def record(self) -> RoomRecord: ...

    def change(
        self, events: list[Event], *, with_view: bool = ..., room_changed: bool = ...
    ) -> None: ...

    async def save(self) -> None: ...

    async def start(self) -> None: ...

    def reschedule(self, *, presence: bool = ...) -> None: ...

    async def remove_person(
        self, person: PlayerRecord, code: int, reason: str, what: str
    ) -> None: ...

    def away_too_long(self, pid: str, grace: float | None = ...) -> float: ...


#: a command may answer with data for the ack (`seat_link`: the link's secret)
Command = Callable[
    [Room, Connection, PlayerRecord, dict[str, Any]], Awaitable[dict[str, Any] | None]
]


async def run_command(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> dict[str, Any] | None:
    kind = cmd.get("type")
    handler = COMMANDS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        raise RoomError(
            "unknown_command", f"unknown command {kind!r}; known: {', '.join(sorted(COMMANDS))}"
        )
    return await handler(room, conn, player, cmd)


# ------------------------------------------------------------------ checks


def _require_host(room: Room, player: PlayerRecord) -> None:
    if room.members.host != player.player_id:
        raise RoomError("not_host", "only the host can do that")


def _require_between_games(room: Room) -> None:
    if room.table.playing:
        raise RoomError("not_between_games", "not while a game is being played")


def _seat_arg(room: Room, cmd: dict[str, Any], *, optional: bool = False) -> int | None:
    seat = cmd.get("seat")
    if seat is None and optional:
        return None
    n = len(room.members.seats)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise RoomError("bad_seat", f"seat must be a seat number from 0 to {n - 1}")
    return seat


def _level_arg(cmd: dict[str, Any]) -> str:
    """A bot's level: one of LEVELS, normal when not given."""
    level = cmd.get("level", DEFAULT_LEVEL)
    if not isinstance(level, str) or level not in LEVELS:
        shown = repr(level)[:40]
        raise RoomError("bad_level", f"level must be one of {', '.join(LEVELS)}, not {shown}")
    return level


def _away_person(room: Room, cmd: dict[str, Any], connected: str) -> tuple[int, PlayerRecord]:
    """The seat named in `cmd` and its person, who must be away (`connected`
    says why it matters when they are not)."""
    seat = _seat_arg(room, cmd)
    assert seat is not None
    target = _person_in(room, seat)
    if room.members.connected(target.player_id):
        raise RoomError("bad_seat", f"{target.name} is connected{connected}")
    return seat, target


def _spectator(room: Room, pid: object) -> PlayerRecord:
    p = room.members.players.get(pid) if isinstance(pid, str) else None
    if p is None or p.is_bot or p.seat is not None:
        raise RoomError("bad_seat", "there is no such spectator; name a seated player by seat")
    return p


def _secret_hash(cmd: dict[str, Any]) -> str | None:
    """A link's secret made by the process holding the asker's socket, which
    sends only its hash (app/rooms/cluster.py, Relay): the secret never
    crosses Redis.  A client sending one itself gains nothing: it knows the
    secret of a hash it made, as it would be told the secret anyway."""
    hashed = cmd.get("secret_hash")
    if hashed is None:
        return None
    if not isinstance(hashed, str) or len(hashed) != 64 or hashed.strip("0123456789abcdef"):
        raise RoomError("bad_command", "secret_hash must be 64 hexadecimal digits")
    return hashed


def _person_in(room: Room, seat: int) -> PlayerRecord:
    pid = room.members.seats[seat]
    if pid is None or room.members.players[pid].is_bot:
        raise RoomError("bad_seat", f"there is no person in seat {seat}")
    return room.members.players[pid]


# ---------------------------------------------------------------- commands


async def sit(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    _require_between_games(room)
    target = _seat_arg(room, cmd, optional=True)
    if target == player.seat:
        return
    if target is not None and room.members.seats[target] is not None:
        raise RoomError("seat_taken", f"seat {target} is taken")
    room.members.seat(player, target)
    await room.save()
    room.change([room_event("sat", seat=target, name=player.name)])


async def start(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    _require_host(room, player)
    _require_between_games(room)
    await room.start()


async def rematch(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    _require_host(room, player)
    if room.table.status != FINISHED:
        raise RoomError("not_finished", "a rematch follows a finished game")
    await room.start()


async def add_bot(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    _require_host(room, player)
    _require_between_games(room)
    level = _level_arg(cmd)
    members = room.members
    seat = _seat_arg(room, cmd, optional=True)
    if seat is None:
        seat = members.free_seat()
        if seat is None:
            raise RoomError("seat_taken", "every seat is taken")
    elif members.seats[seat] is not None:
        raise RoomError("seat_taken", f"seat {seat} is taken")
    bot = members.new_bot(seat, level)
    members.add_bot(bot, seat)
    await room.save()
    room.change([room_event("bot_added", seat=seat, name=bot.name, level=level)])


async def remove_bot(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> None:
    _require_host(room, player)
    _require_between_games(room)
    seat = _seat_arg(room, cmd)
    assert seat is not None
    pid = room.members.seats[seat]
    if pid is None or not room.members.players[pid].is_bot:
        raise RoomError("bad_seat", f"there is no bot in seat {seat}")
    bot = room.members.players[pid]
    room.members.forget(bot)
    await room.save()
    room.change([room_event("bot_removed", seat=seat, name=bot.name)])


async def kick(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    """The host removes a person: a player by `seat`, a spectator by `player` id."""
    _require_host(room, player)
    if "player" in cmd:
        target = _spectator(room, cmd.get("player"))
    else:
        seat = _seat_arg(room, cmd)
        assert seat is not None
        target = _person_in(room, seat)
    if target is player:
        raise RoomError("bad_seat", "you cannot kick yourself; use leave")
    await room.remove_person(target, CLOSE_KICKED, "kicked by the host", "kicked")


async def leave(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    await room.remove_person(player, CLOSE_LEFT, "you left the room", "left")


async def chat(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    text = clean_chat(cmd.get("text"))
    if not room.members.may_chat(player):
        raise RoomError("rate_limited", "you are chatting too fast: wait a moment")
    ev = {"type": "chat", "to": None, "seat": player.seat, "name": player.name, "text": text}
    room.change([ev], with_view=False)


async def set_game(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    _require_host(room, player)
    _require_between_games(room)
    name = cmd.get("game", room.table.game.name)
    game = room.games.get(name) if isinstance(name, str) else None
    if game is None:
        known = ", ".join(sorted(room.games))
        raise RoomError("unknown_game", f"unknown game {name!r}; known: {known}")
    try:
        options = game.parse_options(cmd.get("options")).model_dump(mode="json")
    except ValueError as err:
        raise RoomError("bad_options", str(err)) from None
    _check_first_dealer(room, game.name, options.get("first_dealer"))
    room.record.game = game.name
    room.record.options = options
    room.members.refit(game.max_seats)
    room.table.set_game(game)
    await room.save()
    room.change([room_event("game_set", game=game.name, options=options)])


def _check_first_dealer(room: Room, game: str, dealer: object) -> None:
    """A first dealer nobody sits in is refused when saved, not at Start: the
    game's seats are the taken ones, numbered in order (Big Two fills its
    four with bots at the start, so any of its seats will be there)."""
    if not isinstance(dealer, int) or game in BOT_FILL_GAMES:
        return
    taken = sum(pid is not None for pid in room.members.seats)
    if dealer >= taken:
        raise RoomError(
            "bad_options",
            f"First dealer: seat {dealer + 1} is empty; "
            + (f"seats 1 to {taken} are taken" if taken > 1 else "only seat 1 is taken")
            + " (choose the first dealer once everyone has sat down)",
        )


async def set_settings(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> None:
    _require_host(room, player)
    room.settings = parse_settings(cmd.get("settings"), room.settings)
    room.settings_at = room.clock()
    room.record.settings = room.settings.model_dump()
    await room.save()
    room.reschedule()
    room.change([room_event("settings", settings=room.record.settings)])


async def make_host(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> None:
    _require_host(room, player)
    seat = _seat_arg(room, cmd)
    assert seat is not None
    heir = _person_in(room, seat)
    room.members.host = heir.player_id
    await room.save()
    # a host who is away passes the role on after the grace: the wait is set
    # for the new host too (it was set, if at all, for the last one)
    room.reschedule()
    room.change([room_event("host", seat=seat, name=heir.name)])


async def hand_to_bot(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> None:
    """Anyone playing in the game (or the host) may hand an away seat to a bot
    at once: a leaver costs nobody a minute, and the person takes the seat
    back by reconnecting."""
    table = room.table
    if not table.playing:
        raise RoomError("not_playing", "no game is being played")
    if table.seat_of(player.player_id) is None and room.members.host != player.player_id:
        raise RoomError("not_seated", "only the players of this game or the host can do that")
    seat, target = _away_person(room, cmd, "")
    if seat in table.auto:
        return
    table.auto.add(seat)
    room.reschedule()
    room.change([room_event("auto_on", seat=seat, name=target.name, by=player.name)])


#: why a person's own move is refused while the bot plays their turns
AUTOPLAY_ON = "a bot is playing your turns this hand: take your turns back first"


async def autoplay(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    """ "Play my turns this hand": the seat's own person hands their turns to
    the normal bot until the hand ends (a game of one deal - Big Two,
    Possum, Possession - until the game ends), and takes them back with
    `on: false`.  Only for the person who plays the seat now (a seat link's
    holder too): nobody may put another's seat on it - an away seat is
    handed to a bot with `hand_to_bot`.  Kept in memory with the table, as
    the other stand-ins are: a restart ends it (docs/protocol.md)."""
    extra = cmd.keys() - {"type", "on", "seat"}
    if extra:
        raise RoomError("bad_command", f"autoplay takes no field(s) {', '.join(sorted(extra))}")
    on = cmd.get("on")
    if not isinstance(on, bool):
        raise RoomError("bad_command", "autoplay needs on: true or false")
    table = room.table
    if not table.playing:
        raise RoomError("not_playing", "no game is being played")
    seat = table.seat_of(player.player_id)
    if seat is None:
        raise RoomError("not_seated", "only the players of this game can hand their turns to a bot")
    if "seat" in cmd and cmd["seat"] != seat:
        raise RoomError("not_your_seat", "you can only hand your own turns to a bot")
    if on == (seat in table.autoplay):
        return
    if on:
        table.autoplay.add(seat)
    else:
        table.autoplay.discard(seat)
        room.bots.release(seat)
    room.reschedule()
    what = "autoplay_on" if on else "autoplay_off"
    room.change([room_event(what, seat=seat, name=player.name)])


async def seat_link(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> dict[str, Any]:
    """A one-time link with which a person whose device is gone for good takes
    their place back on another: only once they have been away past the
    grace (a dropped phone is back long before), made by the host or a
    player at the table, and announced to the whole room by name."""
    if player.seat is None and room.members.host != player.player_id:
        raise RoomError(
            "not_seated", "only the host and the players at the table can make seat links"
        )
    seat, target = _away_person(room, cmd, ": they can use their own device")
    # the person's grace as it was when they went, and never under the floor:
    # a host who shortens the grace now cannot hand a dropped seat away
    grace = max(room.members.graces.get(target.player_id, 0.0), SEAT_LINK_FLOOR)
    wait = room.away_too_long(target.player_id, grace)
    if wait > 0:
        raise RoomError(
            "too_early",
            f"{target.name} may still come back: wait {wait:.0f} s more before making a seat link",
        )
    secret, expires = room.members.new_claim(target, player, _secret_hash(cmd))
    room.change([room_event("link_made", seat=seat, name=target.name, by=player.name)])
    return {"claim": secret, "seat": seat, "name": target.name, "expires_ms": int(expires * 1000)}


async def move_link(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> dict[str, Any]:
    """A one-time link with which the asker moves their own place to another
    device ("continue on another device"): the new device is the same person
    and this one is signed out of the room once it is used.  A place that
    came to this device by someone else's seat link is not this device's
    person to move: a seat link moves a seat, never a person."""
    if player.lent:
        raise RoomError(
            "not_yours",
            f"this seat came to this device with a seat link: only {player.name}'s own "
            "browser can move them to another device",
        )
    secret, expires = room.members.new_claim(player, player, _secret_hash(cmd))
    return {
        "claim": secret,
        "seat": player.seat,
        "name": player.name,
        "expires_ms": int(expires * 1000),
    }


async def let_in(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    """The host takes back a removal: that browser and account may join again."""
    _require_host(room, player)
    removed = room.members.let_in(cmd.get("player"))
    await room.save()
    room.change([room_event("let_in", name=removed.name, by=player.name)])


async def posso_quiet(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> None:
    """A person's own Posso switches (app/rooms/quiet.py): told to them only,
    and no `change`, so nobody else is sent anything when they flip one."""
    table = room.table
    state = table.state if table.playing else None
    room.quiet.set(player.player_id, cmd, table.games_played, state)
    room.delivery.personal_changed(player.player_id)
    room.reschedule()


async def resync(room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
    room.delivery.send_view(conn)


async def older_story(
    room: Room, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
) -> dict[str, Any]:
    """A page of the events before `before` that the asker's seat may see
    (app/rooms/story.py): anyone in the room, nothing changes."""
    before = cmd.get("before")
    if isinstance(before, bool) or not isinstance(before, int) or before < 0:
        raise RoomError("bad_before", "before must be a room version (a whole number, 0 or more)")
    return room.delivery.older(conn, before)


COMMANDS: dict[str, Command] = {
    "sit": sit,
    "start": start,
    "rematch": rematch,
    "add_bot": add_bot,
    "remove_bot": remove_bot,
    "kick": kick,
    "leave": leave,
    "chat": chat,
    "set_game": set_game,
    "set_settings": set_settings,
    "make_host": make_host,
    "hand_to_bot": hand_to_bot,
    "autoplay": autoplay,
    "let_in": let_in,
    "seat_link": seat_link,
    "move_link": move_link,
    "resync": resync,
    "posso_quiet": posso_quiet,
    "story": older_story,
}
