"""Records among friends: who played what, who placed where, who beats whom.

The reads behind app/api/records.py.  They read the summaries kept up as
games finish (app/db/summaries.py): `person_totals` for a person's records,
`person_pairs` for a head-to-head, the rivals and who may see whom, and
`seat_results` for a room's evening and a person's list of games - so each
answer reads a few index pages however many games a person has played
(bench/history.py measures them at a million games).

A *person* (app/db/people.py) is who the records are about: an account or a
guest browser; a bot is nobody.

Who may see a person's records: that person, and anyone who has finished a
game with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.history import iso, public_ref, public_refs
from app.db.models import (
    Account,
    GameRow,
    GameSeat,
    PersonPair,
    PersonTotal,
    Player,
    Room,
    SeatResult,
    SeriesPoints,
)
from app.db.people import person_of

#: three shared games make a rival (board-game score apps name one no sooner)
RIVAL_GAMES = 3

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
    P = PersonPair
    found = await s.scalar(select(exists().where(P.person == person, P.other.in_(mine))))
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
    T = PersonTotal
    rows = await s.execute(
        select(T.game, T.place, T.games, T.best, T.score_sum, T.scored, T.hands_won, T.possos)
        .where(T.person == person)
        .order_by(T.game, T.place)
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
    mine, top = aliased(SeriesPoints), aliased(SeriesPoints)
    best = select(func.max(top.points)).where(top.room_id == mine.room_id).scalar_subquery()
    played, won = (
        await s.execute(
            select(
                func.count(),
                func.coalesce(
                    func.sum(case((and_(mine.points > 0, mine.points >= best), 1), else_=0)), 0
                ),
            ).where(mine.person == person)
        )
    ).one()
    return {"series": int(played), "series_won": int(won)}


async def head_to_head(s: AsyncSession, one: str, two: str, recent: int = 10) -> dict[str, Any]:
    """Games together per game, who placed higher how often, Posso totals side
    by side over the games they shared, and their latest shared games."""
    P = PersonPair
    rows = await s.execute(
        select(
            P.game,
            P.together,
            P.higher,
            P.lower,
            *(P.best, P.score_sum, P.scored, P.hands_won, P.possos),
            *(P.other_best, P.other_score_sum, P.other_scored, P.other_hands_won, P.other_possos),
        )
        .where(P.person == one, P.other == two)
        .order_by(P.game)
    )
    games: list[dict[str, Any]] = []
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
    # walk back through the games of whichever of the two played fewer
    counts = dict(
        (
            await s.execute(
                select(PersonTotal.person, func.sum(PersonTotal.games))
                .where(PersonTotal.person.in_([one, two]))
                .group_by(PersonTotal.person)
            )
        ).all()
    )
    walk, meet = (one, two) if counts.get(one, 0) <= counts.get(two, 0) else (two, one)
    a, b = aliased(SeatResult), aliased(SeatResult)
    latest = await s.execute(
        select(a.game_id, a.game, a.finished_at, a.place, b.place)
        .select_from(a)
        .join(b, and_(b.game_id == a.game_id, b.person == meet, b.seat != a.seat))
        .where(a.person == walk)
        .order_by(a.game_id.desc())
        .limit(recent)
    )
    shared = [(gid, game, at, pa, pb) for gid, game, at, pa, pb in latest.all()]
    if walk != one:
        shared = [(gid, game, at, pb, pa) for gid, game, at, pa, pb in shared]
    refs = await public_refs(s, [row[0] for row in shared])
    return {
        "games": games,
        "together": sum(g["together"] for g in games),
        "posso": [posso[0].as_json(), posso[1].as_json()],
        "recent": [
            {"id": refs[gid], "game": game, "finished_at": iso(at), "places": [pa, pb]}
            for gid, game, at, pa, pb in shared
        ],
    }


async def rivals(s: AsyncSession, person: str) -> list[dict[str, Any]]:
    """Everyone who shared at least RIVAL_GAMES finished games with `person`,
    most shared first, with who placed higher how often."""
    P = PersonPair
    shared = func.sum(P.together)
    rows = await s.execute(
        select(P.other, _latest_name(P.other), shared, func.sum(P.higher), func.sum(P.lower))
        .where(P.person == person)
        .group_by(P.other)
        .having(shared >= RIVAL_GAMES)
        .order_by(shared.desc(), P.other)
    )
    return [
        {"person": p, "name": name, "together": n, "higher": hi, "lower": lo}
        for p, name, n, hi, lo in rows.all()
    ]


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
    refs = await public_refs(s, ids)
    return [
        {
            "id": refs[gid],
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
            select(
                GameRow.id, GameRow.game, GameRow.started_at, GameRow.finished_at, GameRow.public_id
            )
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
                Player.guest_id,
                Player.account_id,
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
        for gid, seat, name, pid, is_bot, guest, account, place, score, won, possos in rows.all():
            seats.setdefault(gid, []).append(
                {
                    "seat": seat,
                    "name": name,
                    "player": pid,
                    "person": person_of(guest, account),
                    "is_bot": is_bot,
                    "place": place,
                    "score": score,
                    "hands_won": won,
                    "possos": possos,
                }
            )
    games: list[dict[str, Any]] = []
    league: dict[str, dict[str, Any]] = {}
    totals: dict[str, Totals] = {}
    for gid, game, started, finished, public_id in played:
        at_table = seats.get(gid, [])
        games.append(
            {
                "id": public_ref(gid, public_id),
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
                    "person": line["person"],
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
    shown = _own_names(games)
    for g in games:
        for line in g["seats"]:
            line["name"] = shown.get(line["player"], line["name"])
    table = []
    for pid, row in league.items():
        row["name"] = shown.get(pid, row["name"])
        row["tally"] = tally.get(pid) if isinstance(tally, dict) else None
        row["posso"] = totals[pid].as_json() if pid in totals else None
        row["mean_place"] = round(
            sum(int(place) * n for place, n in row["places"].items()) / row["played"], 2
        )
        table.append(row)
    # what the evening's games say, whatever the game: wins, then the better
    # places on average, then more games played (the Big Two series is shown
    # beside, explained, but counts only Big Two)
    table.sort(key=lambda r: (-r["won"], r["mean_place"], -r["played"], r["name"]))
    return {"games": games, "league": table}


def _own_names(games: list[dict[str, Any]]) -> dict[str, str]:
    """Each seat-holder's name for the evening, told apart: a bot removed and
    another added in its seat were both "Bot 3" - the later one is shown as
    "Bot 3 (2)", so each has its own row and its own name."""
    latest: dict[str, str] = {}  # in order of first game, with the latest name
    for g in games:
        for line in g["seats"]:
            latest[line["player"]] = line["name"]
    taken: dict[str, int] = {}
    out: dict[str, str] = {}
    for pid, name in latest.items():
        n = taken[name] = taken.get(name, 0) + 1
        out[pid] = name if n == 1 else f"{name} ({n})"
    return out
