"""Writing the records' summaries as a game finishes (app/db/standings.py
reads them).

Four tables, all derived from a finished game's result and score lines and
written in the transaction that stores the result (`record_game`, called by
app/db/writes.py), so they never disagree with it:

- `seat_results`: one row per seat (place, score, Posso hands won and Possos
  taken, the public person id): a room's evening, a person's games;
- `person_totals`: per person, game and place, the games and their sums:
  a person's records are a handful of rows however many games they played;
- `person_pairs`: per two people and game (both ways round), the games they
  shared, who placed higher how often, and each side's Posso sums: a
  head-to-head, the rivals, and "may this person see that one" are one
  index range each;
- `series_points`: each room's Big Two tally per occupant, counted as the
  room counts it (SERIES_POINTS), so the series a person won are found
  without reading every room's tally.

A first finish adds its seats to the sums (upserts).  Sums cannot take a
game back out (a best score is a minimum), so when a result is written again,
or a guest's records move to an account (`adopt`), the people concerned are
counted again from `seat_results` (`recount`): rare, and exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from sqlalchemy import (
    Connection,
    Table,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import aliased

from app.db.driver_rows import DriverStatement
from app.db.models import (
    GameRow,
    GameSeat,
    PersonPair,
    PersonTotal,
    Player,
    ScoreLine,
    SeatResult,
    SeriesPoints,
)
from app.db.people import person_of

_results = cast(Table, SeatResult.__table__)
_totals = cast(Table, PersonTotal.__table__)
_pairs = cast(Table, PersonPair.__table__)
_games = cast(Table, GameRow.__table__)
_game_seats = cast(Table, GameSeat.__table__)
_players = cast(Table, Player.__table__)
_lines = cast(Table, ScoreLine.__table__)

#: Posso hands won and Possos taken per seat of one game
_LINE_SUMS = (
    select(
        _lines.c.seat,
        func.sum(case((_lines.c.went_out, 1), else_=0)).label("won"),
        func.sum(func.coalesce(_lines.c.posso_count, 0)).label("possos"),
    )
    .where(_lines.c.game_id == bindparam("game_id"))
    .group_by(_lines.c.seat)
    .subquery()
)
#: one read for the whole summary: who sat where, the game's result, the sums
_SEATS_OF_GAME = (
    select(
        _game_seats.c.seat,
        _players.c.player_id,
        func.coalesce(_game_seats.c.name, _players.c.name),
        _players.c.guest_id,
        _players.c.account_id,
        _LINE_SUMS.c.won,
        _LINE_SUMS.c.possos,
        _games.c.room_id,
        _games.c.game,
        _games.c.finished_at,
        _games.c.result,
        # whether the game has been summed before: if not, nothing to clear
        select(_results.c.seat)
        .where(_results.c.game_id == bindparam("game_id"))
        .limit(1)
        .scalar_subquery(),
    )
    .select_from(
        _game_seats.join(_players, _players.c.id == _game_seats.c.player_ref)
        .join(_games, _games.c.id == _game_seats.c.game_id)
        .outerjoin(_LINE_SUMS, _LINE_SUMS.c.seat == _game_seats.c.seat)
    )
    .where(_game_seats.c.game_id == bindparam("game_id"))
)
_DELETE_RESULTS = (
    delete(_results).where(_results.c.game_id == bindparam("game_id")).returning(_results.c.person)
)
#: on SQLite's writer, their rows go to the driver itself (app/db/driver_rows.py)
_INSERT_RESULTS = DriverStatement(insert(_results))
_ADOPT = (
    update(_results)
    .where(_results.c.person == bindparam("guest_person"))
    .values(person=bindparam("account_person"))
)

#: the game whose rooms keep a series tally, and its points per place: as
#: app/rooms/dealing.py counts the tally (tests/api/test_records.py compares them)
SERIES_GAME = "bigtwo"
SERIES_POINTS = (3, 2, 1, 0)
_series = cast(Table, SeriesPoints.__table__)
_POINTS_OF_PLACE = case(
    *((_results.c.place == i + 1, p) for i, p in enumerate(SERIES_POINTS)), else_=0
)

#: columns summed, and the column kept as a minimum, in both summaries
_SUMS = ("scored", "score_sum", "hands_won", "possos")
_PAIR_SUMS = ("together", "higher", "lower", *_SUMS, *(f"other_{c}" for c in _SUMS))
_TOTAL_SUMS = ("games", *_SUMS)


def places_of(result: dict[str, Any] | None) -> dict[int, int]:
    """Seat -> place (1 = first; seats tied in the result share a place)."""
    out: dict[int, int] = {}
    for i, group in enumerate((result or {}).get("places") or []):
        for seat in group or []:
            out[int(seat)] = i + 1
    return out


def record_game(conn: Connection, game_id: int, *, sums: bool = True) -> None:
    """(Re)write a finished game's summaries from its result and score lines.
    A game with no result yet writes nothing.  A first finish costs four
    statements (read, insert the seats, add to two sums; Big Two's series a
    fifth): the read says whether the game was summed before, and only then
    are its seats cleared and their people counted again.  Without
    `sums` only its seats are written (a migration filling many games, which
    counts everyone's sums once at the end)."""
    seats = conn.execute(_SEATS_OF_GAME, {"game_id": game_id}).all()
    before: set[str] = set()
    if not seats or seats[0][11] is not None:  # summed before: cleared, and counted again
        before = {p for (p,) in conn.execute(_DELETE_RESULTS, {"game_id": game_id}) if p}
    rows = _seat_rows(game_id, seats)
    _INSERT_RESULTS.executemany(conn, rows)
    if not sums:
        return
    if before:  # written again: count the people concerned from scratch
        recount(conn, before | {r["person"] for r in rows if r["person"]})
        if rows and rows[0]["game"] == SERIES_GAME:
            _recount_series(conn, rows[0]["room_id"])
    elif rows:
        _add(conn, rows)


def _seat_rows(game_id: int, seats: Sequence[Any]) -> list[dict[str, Any]]:
    if not seats:
        return []
    room_id, game, finished_at, result = seats[0][7:11]
    if not result or finished_at is None:
        return []
    places = places_of(result)
    scores = result.get("scores") or []
    posso = game == "posso"
    rows = []
    for seat, player_id, name, guest_id, account_id, won, possos, *_ in seats:
        if seat not in places:
            continue
        score = scores[seat] if seat < len(scores) else None
        rows.append(
            {
                "game_id": game_id,
                "seat": seat,
                "person": person_of(guest_id, account_id),
                "player_id": player_id,
                "name": name,
                "game": game,
                "room_id": room_id,
                "finished_at": finished_at,
                "place": places[seat],
                "score": score if isinstance(score, int) and not isinstance(score, bool) else None,
                "hands_won": int(won or 0) if posso else None,
                "possos": int(possos or 0) if posso else None,
            }
        )
    return rows


def _side(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    score = row["score"]
    return {
        f"{prefix}scored": int(score is not None),
        f"{prefix}score_sum": score or 0,
        f"{prefix}best": score,
        f"{prefix}hands_won": row["hands_won"] or 0,
        f"{prefix}possos": row["possos"] or 0,
    }


def _add(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """One finished game's seats, added to the people's sums."""
    people = [r for r in rows if r["person"]]
    totals = [
        {"person": r["person"], "game": r["game"], "place": r["place"], "games": 1, **_side(r)}
        for r in people
    ]
    pairs = [
        {
            "person": a["person"],
            "other": b["person"],
            "game": a["game"],
            "together": 1,
            "higher": int(a["place"] < b["place"]),
            "lower": int(a["place"] > b["place"]),
            **_side(a),
            **_side(b, "other_"),
        }
        for a in people
        for b in people
        if a["seat"] != b["seat"] and a["person"] != b["person"]
    ]
    _upsert(conn, "totals").executemany(conn, totals)
    _upsert(conn, "pairs").executemany(conn, pairs)
    if rows[0]["game"] == SERIES_GAME:
        series = [
            {
                "room_id": r["room_id"],
                "player_id": r["player_id"],
                "person": r["person"],
                "points": _points(r["place"]),
            }
            for r in rows
        ]
        _upsert(conn, "series").executemany(conn, series)


_UPSERTS: dict[tuple[str, str], DriverStatement] = {}


def _upsert(conn: Connection, which: str) -> DriverStatement:
    """INSERT ... ON CONFLICT DO UPDATE adding to the sums and keeping the
    smaller best: the same SQL on SQLite and PostgreSQL, built once each."""
    dialect = conn.dialect.name
    key = (dialect, which)
    if key not in _UPSERTS:
        make: Callable[[Table], Any] = (
            postgresql.insert if dialect == "postgresql" else sqlite.insert
        )
        table, keys, sums, mins = {
            "totals": (_totals, ["person", "game", "place"], _TOTAL_SUMS, ("best",)),
            "pairs": (_pairs, ["person", "other", "game"], _PAIR_SUMS, ("best", "other_best")),
            "series": (_series, ["room_id", "player_id"], ("points",), ()),
        }[which]
        stmt = make(table)
        new = stmt.excluded
        changes: dict[str, Any] = {c: table.c[c] + new[c] for c in sums}
        if which == "series":  # a guest who signed in since: the seat is the account's
            changes["person"] = new["person"]
        for c in mins:
            changes[c] = case(
                (new[c].is_(None), table.c[c]),
                (or_(table.c[c].is_(None), new[c] < table.c[c]), new[c]),
                else_=table.c[c],
            )
        upsert = stmt.on_conflict_do_update(index_elements=keys, set_=changes)
        _UPSERTS[key] = DriverStatement(upsert)
    return _UPSERTS[key]


def _sums(r: Any, prefix: str = "") -> list[Any]:
    return [
        func.count(r.score).label(f"{prefix}scored"),
        func.coalesce(func.sum(r.score), 0).label(f"{prefix}score_sum"),
        func.min(r.score).label(f"{prefix}best"),
        func.coalesce(func.sum(r.hands_won), 0).label(f"{prefix}hands_won"),
        func.coalesce(func.sum(r.possos), 0).label(f"{prefix}possos"),
    ]


def _pair_select(a: Any, b: Any) -> Any:
    return (
        select(
            a.person,
            b.person.label("other"),
            a.game,
            func.count().label("together"),
            func.sum(case((a.place < b.place, 1), else_=0)).label("higher"),
            func.sum(case((a.place > b.place, 1), else_=0)).label("lower"),
            *_sums(a),
            *_sums(b, "other_"),
        )
        .select_from(a)
        .join(
            b,
            and_(
                b.game_id == a.game_id,
                b.seat != a.seat,
                b.person.is_not(None),
                b.person != a.person,
            ),
        )
        .group_by(a.person, b.person, a.game)
    )


def _pair_columns() -> list[str]:
    return ["person", "other", "game", "together", "higher", "lower"] + [
        f"{p}{c}"
        for p in ("", "other_")
        for c in ("scored", "score_sum", "best", "hands_won", "possos")
    ]


def recount(conn: Connection, persons: Iterable[str] | None = None) -> None:
    """Count these people's sums again from `seat_results` (everyone's, with
    None: filling the tables for games finished before they existed)."""
    who = sorted(set(persons)) if persons is not None else None
    a, b = aliased(SeatResult), aliased(SeatResult)
    totals = select(
        SeatResult.person,
        SeatResult.game,
        SeatResult.place,
        func.count().label("games"),
        *_sums(SeatResult),
    ).where(SeatResult.person.is_not(None))
    mine = _pair_select(a, b)
    if who is None:
        conn.execute(delete(_totals))
        conn.execute(delete(_pairs))
        _recount_series(conn, None)
        chunks: list[list[str] | None] = [None]
    else:
        chunks = [who[i : i + 200] for i in range(0, len(who), 200)]
    total_columns = [
        "person",
        "game",
        "place",
        "games",
        "scored",
        "score_sum",
        "best",
        "hands_won",
        "possos",
    ]
    for chunk in chunks:
        if chunk is None:
            conn.execute(
                insert(_totals).from_select(
                    total_columns,
                    totals.group_by(SeatResult.person, SeatResult.game, SeatResult.place),
                )
            )
            conn.execute(insert(_pairs).from_select(_pair_columns(), mine))
            continue
        conn.execute(delete(_totals).where(_totals.c.person.in_(chunk)))
        conn.execute(
            delete(_pairs).where(or_(_pairs.c.person.in_(chunk), _pairs.c.other.in_(chunk)))
        )
        conn.execute(
            insert(_totals).from_select(
                total_columns,
                totals.where(SeatResult.person.in_(chunk)).group_by(
                    SeatResult.person, SeatResult.game, SeatResult.place
                ),
            )
        )
        # their pairs both ways round: from their side, and from the others'
        conn.execute(insert(_pairs).from_select(_pair_columns(), mine.where(a.person.in_(chunk))))
        conn.execute(
            insert(_pairs).from_select(
                _pair_columns(),
                mine.where(b.person.in_(chunk), a.person.not_in(chunk)),
            )
        )


def _points(place: int) -> int:
    """Series points for a place (Big Two places are never shared)."""
    return SERIES_POINTS[place - 1] if 0 < place <= len(SERIES_POINTS) else 0


_SERIES_OF_ROOM = (
    select(
        _results.c.room_id,
        _results.c.player_id,
        func.max(_results.c.person),
        func.sum(_POINTS_OF_PLACE),
    )
    .where(_results.c.game == SERIES_GAME)
    .group_by(_results.c.room_id, _results.c.player_id)
)
_SERIES_COLUMNS = ["room_id", "player_id", "person", "points"]


def _recount_series(conn: Connection, room_id: int | None) -> None:
    """A room's series tally (every room's, with None) counted from its seats."""
    if room_id is None:
        conn.execute(delete(_series))
        conn.execute(insert(_series).from_select(_SERIES_COLUMNS, _SERIES_OF_ROOM))
        return
    conn.execute(delete(_series).where(_series.c.room_id == room_id))
    conn.execute(
        insert(_series).from_select(
            _SERIES_COLUMNS, _SERIES_OF_ROOM.where(_results.c.room_id == room_id)
        )
    )


def adopt(conn: Connection, guest_id: str | None, account_id: int) -> None:
    """A guest signed up or in: its records are the account's from now on."""
    guest, account = person_of(guest_id, None), person_of(None, account_id)
    if guest is None or account is None:
        return
    moved = conn.execute(_ADOPT, {"guest_person": guest, "account_person": account})
    if moved.rowcount:
        recount(conn, [guest, account])
        conn.execute(update(_series).where(_series.c.person == guest).values(person=account))
