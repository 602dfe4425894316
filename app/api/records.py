"""Records among friends over HTTP: a person's records and rivals, a
head-to-head (like a crosstable), a room's evening, and the exports (CSV of a
score sheet and of a person's games, a finished game's full record as JSON,
and a replay of such a record).

Who may see what:

- a person's records, rivals and games: that person, and anyone who has
  finished a game with them (app/db/standings.py);
- a head-to-head: anyone who may see both people's records;
- a room's evening: the room's people (anyone else, public replays or not,
  is answered as for a room that does not exist);
- a score sheet's CSV: whoever may see the sheet;
- a game's full record (seed and every action, so every hand): only those
  allowed its full replay - its players, or anyone with public replays, and
  only once the game is over.

Refusals are 403 with a message that says why; an unknown person is refused
the same way as a private one, so person ids cannot be probed.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select

from app.api.deps import RoomCode
from app.api.doors import LOOKUPS, limited
from app.api.history import (
    MAX_STEPS,
    PAGE_STEPS,
    Db,
    GameId,
    Me,
    fail,
    found_game,
    refused,
    replay_chapters,
    replay_steps,
    visible_game,
    who,
)
from app.api.identity import Identity
from app.db import history as h
from app.db import standings as st
from app.db.models import Room
from app.db.people import PERSON_ID, persons_of
from app.db.replay import Perspective
from app.games import GAMES

router = APIRouter(tags=["records"])

PersonId = Annotated[str, Path(pattern=PERSON_ID.pattern, max_length=25)]
#: a loaded record replays through the engine: cap its length (a long Posso
#: game is a few thousand actions)
MAX_RECORD_ACTIONS = 20_000


def _mine(me: Identity) -> list[str]:
    return persons_of(me.guest_id, me.account_id)


async def _visible(db: Db, me: Identity, person: str) -> None:
    if not await st.may_see(db, _mine(me), person):
        raise fail(
            403,
            "private_records",
            f"the records of {person} are for them and for people who have finished "
            "a game with them",
        )


@router.get("/api/me/person")
async def my_person(me: Me) -> dict[str, Any]:
    """The asker's public person id, the one their records page is under."""
    mine = _mine(me)
    return {
        "person": mine[0],
        "signed_in": me.account_id is not None,
        "note": None
        if me.account_id is not None
        else "These records belong to this browser. Sign in to keep them across devices.",
    }


@router.get("/api/people/{person}")
async def person_records(person: PersonId, db: Db, me: Me) -> dict[str, Any]:
    """Games played and won per game, places, Posso totals, Big Two series, and
    rivals (three or more shared games)."""
    await _visible(db, me, person)
    return {
        "person": person,
        "name": await st.person_name(db, person),
        "me": person in _mine(me),
        "kind": "account" if person.startswith("a") else "guest",
        **await st.records(db, person),
        "rivals": await st.rivals(db, person),
        "recent": await st.person_games(db, person, limit=20),
    }


@router.get("/api/people/{person}/rivals")
async def person_rivals(person: PersonId, db: Db, me: Me) -> dict[str, Any]:
    await _visible(db, me, person)
    return {"person": person, "rivals": await st.rivals(db, person)}


@router.get("/api/people/{person}/versus/{other}")
async def versus(person: PersonId, other: PersonId, db: Db, me: Me) -> dict[str, Any]:
    """Head-to-head: every finished game the two played together."""
    if person == other:
        raise fail(400, "same_person", "a head-to-head needs two different people")
    await _visible(db, me, person)
    await _visible(db, me, other)
    return {
        "people": [{"person": p, "name": await st.person_name(db, p)} for p in (person, other)],
        **await st.head_to_head(db, person, other),
    }


@router.get("/api/people/{person}/games.csv", response_class=PlainTextResponse)
async def person_games_csv(person: PersonId, db: Db, me: Me) -> Response:
    """Every finished game of the person, newest first, one line each."""
    await _visible(db, me, person)
    games = await st.person_games(db, person)
    out, w = _writer()
    w.writerow(
        [
            "game_id",
            "finished_at",
            "game",
            "room",
            "seat",
            "place",
            "score",
            "hands_won",
            "possos",
            "players",
        ]
    )
    for g in games:
        w.writerow(
            [
                g["id"],
                g["finished_at"],
                g["game"],
                g["room"],
                g["seat"] + 1,
                g["place"],
                _cell(g["score"]),
                _cell(g["hands_won"]),
                _cell(g["possos"]),
                _text(" / ".join(g["players"])),
            ]
        )
    return _csv(out, f"games-{person}.csv")


@router.get("/api/history/games/{game_id}/sheet.csv", response_class=PlainTextResponse)
async def sheet_csv(game_id: GameId, db: Db, me: Me) -> Response:
    """The Posso score sheet as a spreadsheet: a line per hand; per player the
    hand's points, the running total and the Possos taken."""
    info = await visible_game(db, game_id, me)
    if info.game != "posso":
        raise fail(
            404,
            "no_sheet",
            f"game {info.public_id} is {info.game}: only Posso keeps a score sheet",
        )
    names = {s.seat: _text(s.name) for s in info.seats}
    out, w = _writer()
    head = ["hand", "dealer", "requirement", "went_out", "cut"]
    for s in info.seats:
        head += [
            _text(f"{s.name} (seat {s.seat + 1}) {part}") for part in ("points", "total", "possos")
        ]
    w.writerow(head)
    for hand in await h.score_sheet(db, info.id):
        by_seat = {ln["seat"]: ln for ln in hand["lines"]}
        row = [
            hand["hand"],
            names.get(hand["dealer"], "") if hand["dealer"] is not None else "",
            _requirement_words(hand["requirement"]),
            names.get(hand["went_out"], "") if hand["went_out"] is not None else "",
            _cut_words(hand["cut"], names.get(hand["dealer"], "the dealer")),
        ]
        for s in info.seats:
            ln = by_seat.get(s.seat, {})
            row += [_cell(ln.get("points")), _cell(ln.get("total")), _cell(ln.get("possos"))]
        w.writerow(row)
    return _csv(out, f"posso-sheet-{info.public_id}.csv")


@router.get("/api/history/games/{game_id}/record")
async def game_record(game_id: GameId, db: Db, me: Me) -> Response:
    """A finished game's full record: options, seed and every action, for those
    allowed its full replay.  The replay page loads it back (POST /api/replay)."""
    info = await found_game(db, game_id)
    why = (
        f"game {info.public_id}'s full record holds every hand: only its players (or anyone, "
        "with public replays) may take it, once the game is over"
    )
    try:
        perspective = await h.replay_perspective(db, info, who(me))
    except h.Refused:
        raise await refused(db, info, game_id, me, "record_refused", why) from None
    if not info.finished or perspective.kind != "full":
        raise await refused(db, info, game_id, me, "record_refused", why)
    record = {
        "format": "cardroom-game",
        "version": 1,
        "id": info.public_id,
        "game": info.game,
        "room": info.room_code,
        "options": info.options,
        "seed": str(info.seed),  # 62 bits: more than a JavaScript number holds exactly
        "seats": [{"seat": s.seat, "name": s.name} for s in info.seats],
        "started_at": h.iso(info.started_at),
        "finished_at": h.iso(info.finished_at),
        "result": info.result,
        "actions": [[seat, action] for seat, action in await h.action_log(db, info.id)],
    }
    return Response(
        json.dumps(record, ensure_ascii=False),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="game-{info.public_id}.json"'},
    )


class SeatName(BaseModel):
    model_config = ConfigDict(extra="ignore")
    seat: int = Field(ge=0, le=15)
    name: str = Field(max_length=64)


class GameRecord(BaseModel):
    """A record as `GET .../record` gives it (unknown keys are ignored)."""

    model_config = ConfigDict(extra="ignore")
    format: str = Field(pattern="^cardroom-game$")
    game: str = Field(max_length=32)
    options: dict[str, Any]
    seed: str = Field(pattern=r"^[0-9]{1,40}$")
    seats: list[SeatName] = Field(min_length=1, max_length=16)
    result: dict[str, Any] | None = None
    actions: list[tuple[int | None, dict[str, Any]]] = Field(max_length=MAX_RECORD_ACTIONS)


@router.post("/api/replay", dependencies=[limited(LOOKUPS)])
async def replay_record(
    record: GameRecord,
    start: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_STEPS)] = PAGE_STEPS,
) -> dict[str, Any]:
    """Replay a game record someone kept: whoever holds it already holds every
    card, so every seat's view is shown.  Pages as a stored game's replay
    gives them, the first with its `chapters` (app/api/history.py)."""
    if record.game not in GAMES:
        raise fail(422, "unknown_game", f"this server has no {record.game!r} game")
    steps = await replay_steps(
        record.game,
        record.options,
        int(record.seed),
        len(record.seats),
        list(record.actions),
        Perspective("full"),
        start,
        limit,
    )
    body = {
        "game_id": None,
        "game": record.game,
        "status": "finished",
        "perspective": "full",
        "seats": [s.model_dump() for s in record.seats],
        "total_steps": len(record.actions) + 1,
        "start": start,
        "steps": steps,
        "result": record.result,
    }
    if start == 0:
        body["chapters"] = await replay_chapters(
            record.game, record.options, int(record.seed), len(record.seats), list(record.actions)
        )
    return body


@router.get("/api/history/rooms/{code}/evening", dependencies=[limited(LOOKUPS)])
async def room_evening(code: RoomCode, db: Db, me: Me) -> dict[str, Any]:
    """Every game played in the room (its latest room under this code), in
    order, with the league table, for the room's own people.  A room code is
    a lookup like any other (normalised, counted), and a room the asker was
    not in is answered as one that does not exist - public replays or not:
    the route tells nobody which codes exist (public replays open a game to
    whoever has its id, never a room's list of games to whoever has its code)."""
    room = (
        await db.execute(
            select(Room.id).where(Room.code == code).order_by(Room.closed, Room.id.desc()).limit(1)
        )
    ).first()
    if room is None or not await h.in_room(db, room[0], who(me)):
        raise fail(404, "no_such_room", f"there is no room {code} whose evening you were part of")
    return {"room": code, **await st.evening(db, room[0])}


def _writer() -> tuple[io.StringIO, Any]:
    out = io.StringIO()
    return out, csv.writer(out, lineterminator="\r\n")


def _csv(out: io.StringIO, filename: str) -> Response:
    return Response(
        out.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def _text(value: str) -> str:
    """A name in a spreadsheet cell: one that starts like a formula is kept as
    text (a leading apostrophe), so opening the file never runs it."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _requirement_words(req: Any) -> str:
    """A hand's requirement as the sheet says it ("two threes of a kind")."""
    text = req.get("text") if isinstance(req, dict) else None
    if isinstance(text, str):
        return text
    return "" if req is None else str(req)


def _cut_words(cut: Any, dealer: str) -> str:
    """A hand's cut in the sheet's words: "Ann cut 48 (needed 48 or 49): a
    hit, 120 -> 0", "Ann did not cut in time: a miss", or why there was none."""
    if not isinstance(cut, dict):
        return ""
    if cut.get("moot"):
        return f"no cut: it could not change {dealer}'s score"
    if cut.get("count") is None:
        return f"{dealer} did not cut in time: a miss"
    target = cut.get("target")
    needed = f" (needed {target} or {target + 1})" if isinstance(target, int) else ""
    text = f"{dealer} cut {cut['count']}{needed}: {'a hit' if cut.get('hit') else 'a miss'}"
    effect = cut.get("effect")
    if isinstance(effect, dict) and "before" in effect:
        text += f", {effect['before']} -> {effect['after']}"
    return text
