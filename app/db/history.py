"""What the history pages read: a player's past games, one game's facts, its
action log, its Posso score sheet; and who may see how much of a game.

Who may see what (the replay is the only part that can hold hidden cards):

| asker                         | facts, sheet | replay, finished  | replay, running |
|-------------------------------|--------------|-------------------|-----------------|
| played in it                  | yes          | every seat's view | own seat's view*|
| in its room, did not play it  | yes          | spectator's view  | refused         |
| anyone, if public_replays     | yes          | every seat's view | refused         |
| anyone else                   | refused      | refused           | refused         |

(*) only while they still hold the seat: a player who was kicked or left has
handed it to a bot (their row turns into one), and a person whose place a
seat link moved to another device (`lent`) has handed it to whoever opened
the link; neither may follow its cards live from the history page.  The
claimer's browser is not the person, so it reads the game only as the
room's policy lets anyone else.

A game is named by its public id (`public_id`, random: migration 0013), which
counts nothing and cannot be walked; its row id is a sequence, and still
names it for links made before (app/api/history.py answers a number only to
those the game is shown to, and anyone else as if it did not exist).  A
room's own spectators, who could watch the game live, may replay it as they
watched it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from app.db.models import ActionRow, GameRow, GameSeat, Player, Room, ScoreHand, ScoreLine
from app.db.people import person_of
from app.db.replay import Perspective


class Refused(Exception):
    """The asker may not see this; `message` says why, for the 403."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Who:
    guest_id: str | None
    account_id: int | None = None

    def owns(self, guest_id: str | None, account_id: int | None) -> bool:
        if self.guest_id and guest_id == self.guest_id:
            return True
        return self.account_id is not None and account_id == self.account_id

    def clause(self) -> ColumnElement[bool]:
        """SQL: a players row that belongs to this asker."""
        parts: list[ColumnElement[bool]] = []
        if self.guest_id:
            parts.append(Player.guest_id == self.guest_id)
        if self.account_id is not None:
            parts.append(Player.account_id == self.account_id)
        return or_(*parts) if parts else Player.id.is_(None)


@dataclass(frozen=True)
class SeatInfo:
    seat: int
    name: str
    is_bot: bool
    guest_id: str | None
    account_id: int | None
    #: held on another device through a seat link just now
    lent: bool = False

    @property
    def person(self) -> str | None:
        """The public person id (app/db/people.py): what a name links to."""
        return person_of(self.guest_id, self.account_id)


def public_ref(game_id: int, public_id: str | None) -> str:
    """The id pages show for a game: its public id, or its number for a game
    the release before public ids started (a rolling upgrade's few)."""
    return public_id or str(game_id)


#: a game's number as an old link gives it; anything else is a public id
NUMBER = r"[0-9]{1,10}"


async def game_of_ref(s: AsyncSession, ref: str) -> int | None:
    """The row id of the game a route's id names: a public id, or (links
    made before 0013) the number itself; None for no game."""
    if ref.isdigit():
        return int(ref)
    found = await s.scalar(select(GameRow.id).where(GameRow.public_id == ref))
    return None if found is None else int(found)


async def public_refs(s: AsyncSession, ids: list[int]) -> dict[int, str]:
    """The public ids of these games, by row id."""
    out: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = await s.execute(select(GameRow.id, GameRow.public_id).where(GameRow.id.in_(chunk)))
        out.update((gid, public_ref(gid, pub)) for gid, pub in rows.all())
    return out


@dataclass(frozen=True)
class GameInfo:
    id: int
    #: what pages and routes call it (`public_ref`)
    public_id: str
    game: str
    room_id: int
    room_code: str
    room_settings: dict[str, Any]
    options: dict[str, Any]
    seed: int
    seats: list[SeatInfo]
    started_at: datetime
    finished_at: datetime | None
    result: dict[str, Any] | None
    actions: int

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def public(self) -> bool:
        return self.room_settings.get("public_replays") is True

    def seats_of(self, who: Who) -> frozenset[int]:
        return frozenset(s.seat for s in self.seats if who.owns(s.guest_id, s.account_id))

    def seats_held_by(self, who: Who) -> frozenset[int]:
        """The seats the asker occupies now: a kicked or departed player's row
        is a bot's from then on, and a lent place is held on another device."""
        return frozenset(
            s.seat
            for s in self.seats
            if not s.is_bot and not s.lent and who.owns(s.guest_id, s.account_id)
        )

    def summary(self, who: Who) -> dict[str, Any]:
        """JSON facts about the game: no seed (it would deal every hand again),
        no guest or account ids."""
        mine = self.seats_of(who)
        return {
            "id": self.public_id,
            "game": self.game,
            "room": self.room_code,
            "options": self.options,
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
            "status": "finished" if self.finished else "running",
            "actions": self.actions,
            "seats": [
                {
                    "seat": s.seat,
                    "name": s.name,
                    "is_bot": s.is_bot,
                    "me": s.seat in mine,
                    "person": s.person,
                }
                for s in self.seats
            ],
            "my_seats": sorted(mine),
            "result": self.result,
            "public_replays": self.public,
        }


def iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).isoformat()


async def game_info(s: AsyncSession, game_id: int) -> GameInfo | None:
    found = (
        await s.execute(
            select(GameRow, Room.code, Room.settings)
            .join(Room, Room.id == GameRow.room_id)
            .where(GameRow.id == game_id)
        )
    ).first()
    if found is None:
        return None
    g, code, settings = found
    seats = (
        await s.execute(
            select(
                GameSeat.seat,
                func.coalesce(GameSeat.name, Player.name),
                Player.is_bot,
                Player.guest_id,
                Player.account_id,
                func.coalesce(Player.lent, False),
            )
            .join(Player, Player.id == GameSeat.player_ref)
            .where(GameSeat.game_id == game_id)
            .order_by(GameSeat.seat)
        )
    ).all()
    count = await s.scalar(
        select(func.count()).select_from(ActionRow).where(ActionRow.game_id == game_id)
    )
    return GameInfo(
        id=g.id,
        public_id=public_ref(g.id, g.public_id),
        game=g.game,
        room_id=g.room_id,
        room_code=code,
        room_settings=dict(settings or {}),
        options=dict(g.options),
        seed=int(g.seed),
        seats=[SeatInfo(*row) for row in seats],
        started_at=g.started_at,
        finished_at=g.finished_at,
        result=g.result,
        actions=int(count or 0),
    )


async def in_room(s: AsyncSession, room_id: int, who: Who) -> bool:
    """Was the asker ever an occupant (player or spectator) of the room?"""
    found = await s.scalar(select(exists().where(Player.room_id == room_id, who.clause())))
    return bool(found)


async def check_facts(s: AsyncSession, info: GameInfo, who: Who) -> None:
    """Facts and score sheet: for the room's people, or anyone if public."""
    if info.public or info.seats_of(who) or await in_room(s, info.room_id, who):
        return
    raise Refused(
        f"game {info.public_id} was played in a private room you were not in; "
        "its players can ask the host to turn on public replays"
    )


async def replay_perspective(s: AsyncSession, info: GameInfo, who: Who) -> Perspective:
    mine = info.seats_of(who)
    if not info.finished:
        held = info.seats_held_by(who)
        if held:
            return Perspective("seats", held)
        raise Refused(
            f"game {info.public_id} is still being played: only its players can replay it "
            "until it is over, each from the seat they still hold"
        )
    if mine or info.public:
        return Perspective("full")
    if await in_room(s, info.room_id, who):
        return Perspective("spectator")
    raise Refused(
        f"game {info.public_id} was played in a private room you were not in; "
        "its players can ask the host to turn on public replays"
    )


async def action_log(s: AsyncSession, game_id: int) -> list[tuple[int | None, dict[str, Any]]]:
    rows = await s.execute(
        select(ActionRow.seat, ActionRow.action)
        .where(ActionRow.game_id == game_id)
        .order_by(ActionRow.seq)
    )
    return [(seat, action) for seat, action in rows.all()]


async def games_of(
    s: AsyncSession, who: Who, *, limit: int = 20, before: int | None = None
) -> list[dict[str, Any]]:
    """The asker's games, newest first: by this browser's guest id, and by the
    account when signed in."""
    mine = (
        select(GameSeat.game_id).join(Player, Player.id == GameSeat.player_ref).where(who.clause())
    )
    query = (
        select(GameRow, Room.code)
        .join(Room, Room.id == GameRow.room_id)
        .where(GameRow.id.in_(mine))
        .order_by(GameRow.id.desc())
        .limit(limit)
    )
    if before is not None:
        query = query.where(GameRow.id < before)
    games = (await s.execute(query)).all()
    ids = [g.id for g, _ in games]
    seats: dict[int, list[SeatInfo]] = {gid: [] for gid in ids}
    if ids:
        rows = await s.execute(
            select(
                GameSeat.game_id,
                GameSeat.seat,
                func.coalesce(GameSeat.name, Player.name),
                Player.is_bot,
                Player.guest_id,
                Player.account_id,
            )
            .join(Player, Player.id == GameSeat.player_ref)
            .where(GameSeat.game_id.in_(ids))
            .order_by(GameSeat.game_id, GameSeat.seat)
        )
        for gid, seat, name, is_bot, guest, account in rows.all():
            seats[gid].append(SeatInfo(seat, name, is_bot, guest, account))
    out = []
    for g, code in games:
        mine_seats = sorted(x.seat for x in seats[g.id] if who.owns(x.guest_id, x.account_id))
        places = _place(g.result, mine_seats)
        out.append(
            {
                "id": public_ref(g.id, g.public_id),
                "game": g.game,
                "room": code,
                "started_at": iso(g.started_at),
                "finished_at": iso(g.finished_at),
                "status": "finished" if g.finished_at is not None else "running",
                "seats": [
                    {"seat": x.seat, "name": x.name, "is_bot": x.is_bot, "person": x.person}
                    for x in seats[g.id]
                ],
                "my_seats": mine_seats,
                "my_place": places,
                "result": g.result,
            }
        )
    return out


def _place(result: dict[str, Any] | None, seats: list[int]) -> int | None:
    """1-based place of the asker's (first) seat, from the result's places."""
    if not result or not seats:
        return None
    for i, group in enumerate(result.get("places") or []):
        if seats[0] in (group or []):
            return i + 1
    return None


async def score_sheet(s: AsyncSession, game_id: int) -> list[dict[str, Any]]:
    hands = (
        await s.scalars(
            select(ScoreHand).where(ScoreHand.game_id == game_id).order_by(ScoreHand.hand)
        )
    ).all()
    lines = (
        await s.scalars(
            select(ScoreLine)
            .where(ScoreLine.game_id == game_id)
            .order_by(ScoreLine.hand, ScoreLine.seat)
        )
    ).all()
    by_hand: dict[int, list[dict[str, Any]]] = {}
    for ln in lines:
        by_hand.setdefault(ln.hand, []).append(
            {
                "seat": ln.seat,
                "points": ln.points,
                "total": ln.total,
                "went_out": ln.went_out,
                "possos": ln.posso_count,
                "cut": ln.cut,
            }
        )
    return [
        {
            "hand": h.hand,
            "dealer": h.dealer,
            "requirement": h.requirement,
            "went_out": h.went_out,
            "cut": h.cut,
            "lines": by_hand.get(h.hand, []),
            "row": h.row,
        }
        for h in hands
    ]
