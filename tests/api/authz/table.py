"""What each role gets from each route and command, in each room state.

HTTP cells are status codes, a refusal's with its error code ("403
private_game"), a replay's with the perspective it was given ("200 seats",
"200 full", "200 spectator"), a join's with whose place it gave ("200 own",
"200 new"); socket cells are "ok", an error code, or "closed <code>".  A
cell the app does not give yet, because the behaviour it encodes (issue 34)
is not built, is a `Cell` with `pending` naming what is missing: its test is
an xfail(strict) until the app gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.api.authz.world import BETWEEN, BOT_SEAT, OPTIONS, PLAYING, ROLES, ZED_SEAT, World


@dataclass(frozen=True)
class Cell:
    want: Any
    #: the behaviour the app does not have yet (the cell's test is an xfail)
    pending: str | None = None


Rule = Callable[[str, str], Any]  # (state, role) -> what the role gets (or a Cell)

#: the room's people as the database knows them, by their browser's identity
#: (Olga by her account, on either device; Rita's browser is Rita)
PEOPLE = frozenset({"host", "player", "replaced", "spectator", "device_a", "device_b"})
#: everyone the room ever held, the removed too: the database keeps their rows
EVER = PEOPLE | {"removed", "kicked"}
#: those who played the room's game, as credited (Rita's seat is Rita's)
PLAYED = frozenset({"host", "player", "replaced", "device_a", "device_b"})
#: the roles whose socket is let in (their tab), and what the others get at the door
IN_ROOM = frozenset({"host", "player", "claimer", "spectator", "device_b"})
DOOR = {
    "replaced": "seat_moved",
    "removed": "bad_token",
    "device_a": "bad_token",
    "kicked": "bad_token",
    "knows_code": "bad_token",
    "stranger": "no_room",
}
SEATS = {"host": 0, "player": 1, "device_b": 2, "claimer": 3, "spectator": None}


def every(answer: Any) -> Rule:
    return lambda state, role: answer


NO_ROOM = "404 no_room"
PRIVATE = "403 private_game"
NO_REPLAY = "403 replay_refused"
NO_RECORDS = "403 private_records"


def _room_code(state: str, role: str) -> Any:
    return NO_ROOM if role == "stranger" or state == "closed" else 200


def _facts(state: str, role: str) -> Any:
    """A game's facts: its room's people (and anyone if public); before the
    room's first game, the rows ask about Rita's game elsewhere.  A seat-link
    claimer's browser is nobody of the room's: it reads the room's games as
    anyone else would (docs/security.md)."""
    if state == "lobby":
        return 200 if role == "replaced" else PRIVATE
    return 200 if role in EVER else PRIVATE


def _sheet(state: str, role: str) -> Any:
    """tiny keeps no score sheet: those who may see the game are told so."""
    facts = _facts(state, role)
    return "404 no_sheet" if facts == 200 else facts


def _replay(state: str, role: str) -> Any:
    if state == "lobby":  # Rita's game elsewhere: her own seat, nobody else's
        return "200 seats" if role == "replaced" else NO_REPLAY
    if state in PLAYING:  # only those who hold one of its seats, from it
        # not Rita's own browser while her place is lent to Eve's (identity-spec 3)
        return "200 seats" if role in PLAYED - {"replaced"} else NO_REPLAY
    if role in PLAYED:  # finished: everyone who played it, the whole game
        return "200 full"
    return "200 spectator" if role in EVER else NO_REPLAY


def _record(state: str, role: str) -> Any:
    """A game's whole record (every hand): its players, once it is over."""
    over = state not in PLAYING and state != "lobby"
    return 200 if over and role in PLAYED else "403 record_refused"


def _records(state: str, role: str) -> Any:
    """Rita's records: hers, and theirs who finished a game with her."""
    if role == "replaced":
        return 200
    finished = state in ("between", "finished", "closed")
    return 200 if finished and role in PLAYED else NO_RECORDS


def _versus(state: str, role: str) -> Any:
    """Rita against the host: whoever may see both."""
    finished = state in ("between", "finished", "closed")
    return 200 if finished and role in PLAYED else NO_RECORDS


def _evening(state: str, role: str) -> Any:
    """A room's evening: for the people who were in it; anyone else is
    told there is no such room."""
    return 200 if role in EVER else "404 no_such_room"


#: the roles signed in to an account that holds a place here: joining gives
#: the account its own place back, on this device.  A guest browser that joins
#: again is a new person of the room (two people on one browser are allowed;
#: a guest's place follows them only through a move link).
OWN = frozenset({"device_a", "device_b"})


def _join(state: str, role: str, *, locked: bool = False) -> Any:
    """ "200 own": the role's own place back, on a new token; "200 new": a
    new person."""
    if role == "stranger" or state == "closed":
        return NO_ROOM
    if role in ("removed", "kicked"):
        return "403 removed"
    if role in OWN:
        return "200 own"
    # anyone else is a new person: the claimer's own browser, a stranger with
    # the code, and a guest of the room joining again
    return "403 locked" if locked else "200 new"


def _claim(state: str, role: str) -> Any:
    """A bad link: one answer whether or not the room exists; a browser the
    host removed is told so first."""
    return "403 removed" if state != "closed" and role in ("removed", "kicked") else "400 bad_claim"


HTTP: dict[str, Rule] = {
    "GET /api/health": every(200),
    "GET /api/ready": every(200),
    "GET /api/games": every(200),
    "GET /api/room-settings": every(200),
    "POST /api/rooms": every(200),
    "POST /api/rooms/{code}/join": _join,
    "POST /api/rooms/{code}/join [locked]": lambda state, role: _join(state, role, locked=True),
    "POST /api/rooms/{code}/claim": _claim,
    "GET /api/rooms/{code}": _room_code,
    "POST /api/qr": every(200),
    "POST /api/accounts/signup": every(201),
    "POST /api/accounts/signin": every("401 bad_credentials"),  # with a wrong password
    "POST /api/accounts/signout": every(200),
    "GET /api/me": every(200),
    "GET /api/me/games": every(200),
    "GET /api/me/person": every(200),
    "GET /api/history/games/{game_id}": _facts,
    "GET /api/history/games/{game_id}/sheet": _sheet,
    "GET /api/history/games/{game_id}/sheet.csv": _sheet,
    "GET /api/history/games/{game_id}/replay": _replay,
    "GET /api/history/games/{game_id}/record": _record,
    "GET /api/people/{person}": _records,
    "GET /api/people/{person}/rivals": _records,
    "GET /api/people/{person}/games.csv": _records,
    "GET /api/people/{person}/versus/{other}": _versus,
    "POST /api/replay": every(422),  # a record that is not one
    "GET /api/history/rooms/{code}/evening": _evening,
    "GET /api/push": every(200),
    "PUT /api/me/push": every(200),
    "DELETE /api/me/push": every(200),
    "GET /manifest.webmanifest": every(200),
    "GET /sw.js": every(200),
    "GET /r/{code}": every(200),  # the client's page: no lookup, nothing about the room
    "GET /": every(200),
    "GET /index.html": every(200),
    "GET /b/{stamp}/{path:path}": every(200),  # the client's files under a build id
    "MOUNT /": every(200),
    # the socket: the first thing it says
    "WS /ws/rooms/{code}": lambda state, role: (
        "no_room" if state == "closed" else "view" if role in IN_ROOM else DOOR[role]
    ),
}


def command(rule: Callable[[str, str], Any]) -> Rule:
    """A socket command's row: outsiders are turned away at the door, and
    nobody gets into a closed room."""

    def cell(state: str, role: str) -> Any:
        if state == "closed":
            return "no_room"
        if role not in IN_ROOM:
            return DOOR[role]
        return rule(state, role)

    return cell


def host_only(allowed: Callable[[str], Any]) -> Rule:
    return command(lambda state, role: allowed(state) if role == "host" else "not_host")


def _between(answer: str, *, playing: str = "not_between_games") -> Callable[[str], str]:
    return lambda state: answer if state in BETWEEN else playing


def _seat_link(state: str, role: str) -> Any:
    if role == "spectator":
        return "not_seated"
    return "ok" if state == "past_grace" else "too_early"


def _hand_to_bot(state: str, role: str) -> Any:
    if state not in PLAYING:
        return "not_playing"
    return "not_seated" if role == "spectator" else "ok"


def _autoplay(state: str, role: str) -> Any:
    """ "Play my turns this hand": a seat's own person, for their own seat
    (the seat link's holder plays the seat, so it may too)."""
    if state not in PLAYING:
        return "not_playing"
    return "not_seated" if role == "spectator" else "ok"


def _autoplay_other(state: str, role: str) -> Any:
    """Naming another's seat: nobody may put it on autoplay."""
    got = _autoplay(state, role)
    return "not_your_seat" if got == "ok" else got


def _action(state: str, role: str) -> Any:
    if state not in PLAYING:
        return "not_playing"
    if role == "spectator":
        return "not_seated"
    return "bad_card" if role == "host" else "not_your_turn"  # the host is to act


SOCKET: dict[str, Rule] = {
    "sit": command(lambda s, r: "ok" if s in BETWEEN else "not_between_games"),
    "start": host_only(_between("ok")),
    "rematch": host_only(lambda s: "ok" if s == "finished" else "not_finished"),
    "add_bot": host_only(_between("ok")),
    "remove_bot": host_only(_between("ok")),
    "kick": host_only(lambda s: "ok"),
    # the socket closes with 1000 "you left the room" (no answer after it)
    "leave": command(lambda s, r: "closed 1000"),
    "chat": command(lambda s, r: "ok"),
    "set_game": host_only(_between("ok")),
    "set_settings": host_only(lambda s: "ok"),
    "set_settings [locked]": host_only(lambda s: "ok"),
    "make_host": host_only(lambda s: "ok"),
    "hand_to_bot": command(_hand_to_bot),
    "seat_link": command(_seat_link),
    "move_link": command(lambda s, r: "not_yours" if r == "claimer" else "ok"),
    "resync": command(lambda s, r: "ok"),
    # older pages of the game's story, each asker's own (app/rooms/story.py)
    "story": command(lambda s, r: "ok"),
    "posso_quiet": command(lambda s, r: "ok"),
    "autoplay": command(_autoplay),
    "autoplay [another seat]": command(_autoplay_other),
    "let_in": host_only(lambda s: "ok"),
    # a card nobody holds: the host is to act, the others wait their turn
    "action": command(_action),
}


def fields(row: str, w: World, role: str) -> dict[str, Any]:
    """Each command's fields in the matrix (a success changes as little as
    it can: a person sits in their own seat, the host makes themselves host)."""
    return {
        "sit": {"seat": SEATS.get(role)},
        "remove_bot": {"seat": BOT_SEAT},
        "kick": {"seat": 1},
        "chat": {"text": "hello"},
        "set_game": {"game": "tiny", "options": OPTIONS},
        "set_settings": {"settings": {}},
        "set_settings [locked]": {"settings": {"locked": True}},
        "make_host": {"seat": 0},
        "hand_to_bot": {"seat": ZED_SEAT},
        "seat_link": {"seat": ZED_SEAT},
        "posso_quiet": {"helpful": True},
        "autoplay": {"on": True},
        "autoplay [another seat]": {"on": True, "seat": ZED_SEAT},
        "let_in": {"player": w.sam},
        "story": {"before": 1},
        "action": {"type": "play", "card": "nope"},
    }.get(row, {})


#: socket rows whose successes change only what the asker is sent
QUIET_OK = frozenset({"sit", "move_link", "resync", "posso_quiet", "story"})
#: socket rows whose successes tell the room but leave every other cell's
#: answer as it was: run after the refusals, on the same room
LOUD_OK = frozenset({"chat", "set_settings", "make_host", "hand_to_bot", "seat_link"})
#: the rest change the room for good: they run on rooms built for them, in
#: groups whose cells each leave the next one's answer as it would be on a
#: room of its own - everyone leaves, the host last; the host's commands,
#: the game started last; everyone's own seat on autoplay (the bots then play
#: each seat's turns, and a room whose every seat is bot-driven plays its game
#: to the end: no later cell could run on it); a rematch alone (a start would
#: take its place)
HOST_FRESH = ("let_in", "set_settings [locked]", "add_bot", "remove_bot", "kick", "set_game")
SHARED_FRESH = (
    [("leave", role) for role in ("player", "claimer", "spectator", "device_b", "host")],
    [(row, "host") for row in (*HOST_FRESH, "start")],
    [("autoplay", role) for role in ROLES],
)


def one_room_each(cells: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The cells that change the room for good, grouped by the room each
    runs on (SHARED_FRESH's order), any other cell alone."""
    groups = [[c for c in group if c in cells] for group in SHARED_FRESH]
    grouped = {c for group in groups for c in group}
    return [g for g in groups if g] + [[c] for c in cells if c not in grouped]


def expect(table: dict[str, Rule], row: str, state: str, role: str) -> Cell:
    got = table[row](state, role)
    return got if isinstance(got, Cell) else Cell(got)


def has_pending(table: dict[str, Rule], row: str, state: str) -> bool:
    return any(expect(table, row, state, role).pending for role in ROLES)


def route_of(row: str) -> str:
    """The route or command a row is about (a row may be a variant: "[locked]")."""
    return row.split(" [", 1)[0]


assert all(r in ROLES for r in (*PEOPLE, *IN_ROOM, *DOOR))
