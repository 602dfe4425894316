"""Records among friends: who played what, who placed where, who beats whom.

Everything here reads `seat_results` (app/db/models.py), one row per seat of a
finished game, written by `record_game` in the same transaction that stores
the game's result.  A person's records, a head-to-head and a room's evening
then read a person's rows through one covering index instead of parsing every
game's result and summing its score sheet (bench/history.py measures them at a
million games).

A *person* (app/db/people.py) is who the records are about: an account or a
guest browser; a bot is nobody.  When a guest signs up or signs in, its rows
move to the account (`ADOPT`).

Who may see a person's records: that person, and anyone who has finished a
game with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    Connection,
    Table,
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.history import iso
from app.db.models import Account, GameRow, GameSeat, Player, Room, ScoreLine, SeatResult
from app.db.people import person_of

#: three shared games make a rival (board-game score apps name one no sooner)
RIVAL_GAMES = 3
#: the game whose rooms keep a series tally (app/rooms/room.py)
SERIES_GAME = "bigtwo"

_results = cast(Table, SeatResult.__table__)
_games = cast(Table, GameRow.__table__)
_game_seats = cast(Table, GameSeat.__table__)
_players = cast(Table, Player.__table__)
_lines = cast(Table, ScoreLine.__table__)


# ---------------------------------------------------------------- writing

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
    )
    .select_from(
        _game_seats.join(_players, _players.c.id == _game_seats.c.player_ref)
        .join(_games, _games.c.id == _game_seats.c.game_id)
        .outerjoin(_LINE_SUMS, _LINE_SUMS.c.seat == _game_seats.c.seat)
    )
    .where(_game_seats.c.game_id == bindparam("game_id"))
)
_DELETE_RESULTS = delete(_results).where(_results.c.game_id == bindparam("game_id"))
_INSERT_RESULTS = insert(_results)
ADOPT = (
    update(_results)
    .where(_results.c.person == bindparam("guest_person"))
    .values(person=bindparam("account_person"))
)


def places_of(result: dict[str, Any] | None) -> dict[int, int]:
    """Seat -> place (1 = first; seats tied in the result share a place)."""
    out: dict[int, int] = {}
    for i, group in enumerate((result or {}).get("places") or []):
        for seat in group or []:
            out[int(seat)] = i + 1
    return out


def record_game(conn: Connection, game_id: int) -> None:
    """(Re)write the seat rows of a finished game from its result and score
    lines; called in the transaction that stores the result, so the two never
    disagree.  A game with no result yet writes nothing.  Three statements
    (one read, a delete for a result written again, one insert)."""
    seats = conn.execute(_SEATS_OF_GAME, {"game_id": game_id}).all()
    conn.execute(_DELETE_RESULTS, {"game_id": game_id})
    if not seats:
        return
    room_id, game, finished_at, result = seats[0][7:]
    if not result or finished_at is None:
        return
    places = places_of(result)
    scores = result.get("scores") or []
    rows = []
    for seat, player_id, name, guest_id, account_id, won, possos, *_ in seats:
        if seat not in places:
            continue
        score = scores[seat] if seat < len(scores) else None
        posso = game == "posso"
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
    if rows:
        conn.execute(_INSERT_RESULTS, rows)


def adoption(guest_id: str | None, account_id: int) -> dict[str, Any] | None:
    """The parameters of `ADOPT` when a guest signs up or in (its records are
    the account's from then on); None for no guest."""
    guest = person_of(guest_id, None)
    if guest is None:
        return None
    return {"guest_person": guest, "account_person": person_of(None, account_id)}


# ---------------------------------------------------------------- reading

R = SeatResult


def _latest_name(person: Any) -> Any:
    """SQL: the name a person played their latest game under."""
    c = aliased(SeatResult)
    return (
        select(c.name)
        .where(c.person == person)
        .order_by(c.game_id.desc())
        .limit(1)
        .scalar_subquery()
    )


async def person_name(s: AsyncSession, person: str) -> str | None:
    """The account's name, or the name a guest last played under; None for
    nobody the records know."""
    name = await s.scalar(select(_latest_name(person)))
    if person.startswith("a"):
        account = await s.scalar(select(Account.name).where(Account.id == int(person[1:])))
        return account or name
    return name


async def may_see(s: AsyncSession, mine: list[str], person: str) -> bool:
    """That person themselves, or someone who finished a game with them."""
    if person in mine:
        return True
    if not mine:
        return False
    a, b = aliased(SeatResult), aliased(SeatResult)
    found = await s.scalar(
        select(
            exists().where(
                a.person.in_(mine), b.game_id == a.game_id, b.person == person, b.seat != a.seat
            )
        )
    )
    return bool(found)


@dataclass
class Totals:
    """Posso totals over some games: lower totals are better."""

    games: int = 0
    best: int | None = None
    sum: int = 0
    scored: int = 0
    hands_won: int = 0
    possos: int = 0

    def add(
        self, games: int, best: int | None, total: int | None, scored: int, won: Any, possos: Any
    ) -> None:
        self.games += games
        if best is not None:
            self.best = best if self.best is None else min(self.best, best)
        self.sum += int(total or 0)
        self.scored += scored
        self.hands_won += int(won or 0)
        self.possos += int(possos or 0)

    def as_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "best": self.best,
            "average": round(self.sum / self.scored, 1) if self.scored else None,
            "hands_won": self.hands_won,
            "possos": self.possos,
        }


async def records(s: AsyncSession, person: str) -> dict[str, Any]:
    """Games played and won per game, places, Posso totals, Big Two series."""
    rows = await s.execute(
        select(
            R.game,
            R.place,
            func.count(),
            func.min(R.score),
            func.sum(R.score),
            func.count(R.score),
            func.sum(R.hands_won),
            func.sum(R.possos),
        )
        .where(R.person == person)
        .group_by(R.game, R.place)
        .order_by(R.game, R.place)
    )
    games: dict[str, dict[str, Any]] = {}
    posso = Totals()
    for game, place, n, best, total, scored, won, possos in rows.all():
        g = games.setdefault(game, {"game": game, "played": 0, "won": 0, "places": {}})
        g["played"] += n
        g["won"] += n if place == 1 else 0
        g["places"][str(place)] = n
        if game == "posso":
            posso.add(n, best, total, scored, won, possos)
    return {
        "games": list(games.values()),
        "played": sum(g["played"] for g in games.values()),
        "won": sum(g["won"] for g in games.values()),
        "posso": posso.as_json(),
        "bigtwo": await series(s, person),
    }


async def series(s: AsyncSession, person: str) -> dict[str, int]:
    """Big Two series: a room's Big Two games are one series, won by whoever
    tops its tally (ties win together; a series still being played counts as
    its leader's)."""
    mine = (
        await s.execute(
            select(R.room_id, R.player_id)
            .where(R.person == person, R.game == SERIES_GAME)
            .distinct()
        )
    ).all()
    ids: dict[int, set[str]] = {}
    for room_id, player_id in mine:
        ids.setdefault(room_id, set()).add(player_id)
    won = 0
    rooms = sorted(ids)
    for start in range(0, len(rooms), 500):
        chunk = rooms[start : start + 500]
        for room_id, tally in await s.execute(
            select(Room.id, Room.tally).where(Room.id.in_(chunk))
        ):
            points = {k: v for k, v in (tally or {}).items() if isinstance(v, int | float)}
            top = max(points.values(), default=0)
            if top > 0 and any(points.get(pid) == top for pid in ids[room_id]):
                won += 1
    return {"series": len(rooms), "series_won": won}


def _side_sums(r: Any) -> list[Any]:
    return [
        func.min(r.score),
        func.sum(r.score),
        func.count(r.score),
        func.sum(r.hands_won),
        func.sum(r.possos),
    ]


async def head_to_head(s: AsyncSession, one: str, two: str, recent: int = 10) -> dict[str, Any]:
    """Games together per game, who placed higher how often, Posso totals side
    by side over the games they shared, and their latest shared games."""
    a, b = aliased(SeatResult), aliased(SeatResult)
    together = and_(b.game_id == a.game_id, b.person == two, b.seat != a.seat)
    rows = await s.execute(
        select(
            a.game,
            func.count(),
            func.sum(case((a.place < b.place, 1), else_=0)),
            func.sum(case((a.place > b.place, 1), else_=0)),
            *_side_sums(a),
            *_side_sums(b),
        )
        .select_from(a)
        .join(b, together)
        .where(a.person == one)
        .group_by(a.game)
        .order_by(a.game)
    )
    games = []
    posso = (Totals(), Totals())
    for game, n, higher, lower, *sums in rows.all():
        games.append(
            {
                "game": game,
                "together": n,
                "first_higher": higher,
                "second_higher": lower,
                "tied": n - higher - lower,
            }
        )
        if game == "posso":
            posso[0].add(n, *sums[:5])
            posso[1].add(n, *sums[5:])
    latest = await s.execute(
        select(a.game_id, a.game, a.finished_at, a.place, b.place)
        .select_from(a)
        .join(b, together)
        .where(a.person == one)
        .order_by(a.game_id.desc())
        .limit(recent)
    )
    return {
        "games": games,
        "together": sum(g["together"] for g in games),
        "posso": [posso[0].as_json(), posso[1].as_json()],
        "recent": [
            {"id": gid, "game": game, "finished_at": iso(at), "places": [pa, pb]}
            for gid, game, at, pa, pb in latest.all()
        ],
    }


async def rivals(s: AsyncSession, person: str) -> list[dict[str, Any]]:
    """Everyone who shared at least RIVAL_GAMES finished games with `person`,
    most shared first, with who placed higher how often."""
    a, b = aliased(SeatResult), aliased(SeatResult)
    shared = func.count()
    rows = await s.execute(
        select(
            b.person,
            shared,
            func.sum(case((a.place < b.place, 1), else_=0)),
            func.sum(case((a.place > b.place, 1), else_=0)),
        )
        .select_from(a)
        .join(
            b,
            and_(
                b.game_id == a.game_id,
                b.seat != a.seat,
                b.person.is_not(None),
                b.person != person,
            ),
        )
        .where(a.person == person)
        .group_by(b.person)
        .having(shared >= RIVAL_GAMES)
        .order_by(shared.desc(), b.person)
    )
    found = rows.all()
    names = await _names(s, [p for p, *_ in found])
    return [
        {"person": p, "name": names.get(p), "together": n, "higher": hi, "lower": lo}
        for p, n, hi, lo in found
    ]


async def _names(s: AsyncSession, persons: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for start in range(0, len(persons), 200):
        chunk = persons[start : start + 200]
        latest = (
            select(R.person, func.max(R.game_id).label("last"))
            .where(R.person.in_(chunk))
            .group_by(R.person)
            .subquery()
        )
        rows = await s.execute(
            select(R.person, R.name).join(
                latest, and_(R.game_id == latest.c.last, R.person == latest.c.person)
            )
        )
        out.update({p: n for p, n in rows.all() if p is not None})
    return out


async def person_games(
    s: AsyncSession, person: str, *, limit: int | None = None
) -> list[dict[str, Any]]:
    """The person's finished games, newest first, with the place and score of
    each and the names at the table (for the CSV export)."""
    query = (
        select(
            R.game_id,
            R.game,
            R.finished_at,
            R.seat,
            R.place,
            R.score,
            R.hands_won,
            R.possos,
            Room.code,
        )
        .join(Room, Room.id == R.room_id)
        .where(R.person == person)
        .order_by(R.game_id.desc())
    )
    if limit is not None:
        query = query.limit(limit)
    mine = (await s.execute(query)).all()
    tables: dict[int, list[str]] = {}
    ids = [row[0] for row in mine]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for gid, name in await s.execute(
            select(R.game_id, R.name).where(R.game_id.in_(chunk)).order_by(R.game_id, R.seat)
        ):
            tables.setdefault(gid, []).append(name)
    return [
        {
            "id": gid,
            "game": game,
            "finished_at": iso(at),
            "room": code,
            "seat": seat,
            "place": place,
            "score": score,
            "hands_won": won,
            "possos": possos,
            "players": tables.get(gid, []),
        }
        for gid, game, at, seat, place, score, won, possos, code in mine
    ]


async def evening(s: AsyncSession, room_id: int) -> dict[str, Any]:
    """A room's games in order (finished ones with places and scores) and its
    league table: per occupant, games, wins, each place, Posso totals."""
    played = (
        await s.execute(
            select(GameRow.id, GameRow.game, GameRow.started_at, GameRow.finished_at)
            .where(GameRow.room_id == room_id)
            .order_by(GameRow.id)
        )
    ).all()
    ids = [row[0] for row in played]
    seats: dict[int, list[dict[str, Any]]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = await s.execute(
            select(
                GameSeat.game_id,
                GameSeat.seat,
                func.coalesce(GameSeat.name, Player.name),
                Player.player_id,
                Player.is_bot,
                R.place,
                R.score,
                R.hands_won,
                R.possos,
            )
            .join(Player, Player.id == GameSeat.player_ref)
            .outerjoin(R, and_(R.game_id == GameSeat.game_id, R.seat == GameSeat.seat))
            .where(GameSeat.game_id.in_(chunk))
            .order_by(GameSeat.game_id, GameSeat.seat)
        )
        for gid, seat, name, pid, is_bot, place, score, won, possos in rows.all():
            seats.setdefault(gid, []).append(
                {
                    "seat": seat,
                    "name": name,
                    "player": pid,
                    "is_bot": is_bot,
                    "place": place,
                    "score": score,
                    "hands_won": won,
                    "possos": possos,
                }
            )
    games = []
    league: dict[str, dict[str, Any]] = {}
    totals: dict[str, Totals] = {}
    for gid, game, started, finished in played:
        at_table = seats.get(gid, [])
        games.append(
            {
                "id": gid,
                "game": game,
                "started_at": iso(started),
                "finished_at": iso(finished),
                "status": "finished" if finished is not None else "running",
                "seats": at_table,
            }
        )
        if finished is None:
            continue
        for line in at_table:
            if line["place"] is None:
                continue
            entry = league.setdefault(
                line["player"],
                {
                    "player": line["player"],
                    "name": line["name"],
                    "is_bot": line["is_bot"],
                    "played": 0,
                    "won": 0,
                    "places": {},
                },
            )
            entry["name"] = line["name"]
            entry["played"] += 1
            entry["won"] += line["place"] == 1
            entry["places"][str(line["place"])] = entry["places"].get(str(line["place"]), 0) + 1
            if game == "posso":
                totals.setdefault(line["player"], Totals()).add(
                    1,
                    line["score"],
                    line["score"],
                    int(line["score"] is not None),
                    line["hands_won"],
                    line["possos"],
                )
    tally = await s.scalar(select(Room.tally).where(Room.id == room_id)) or {}
    table = []
    for pid, row in league.items():
        row["tally"] = tally.get(pid) if isinstance(tally, dict) else None
        row["posso"] = totals[pid].as_json() if pid in totals else None
        table.append(row)
    table.sort(key=lambda r: (-(r["tally"] or 0), -r["won"], -r["played"], r["name"]))
    return {"games": games, "league": table}
