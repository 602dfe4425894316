"""Putting a played game into the records the way the room layer does."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.models import PersonPair, PersonTotal, SeriesPoints
from app.store.records import PlayerRecord, Records, RoomRecord, new_game_ref
from tests.db.tinygame import Played


async def store(
    records: Records,
    played: Played,
    code: str,
    guests: list[str | None],
    *,
    settings: dict[str, Any] | None = None,
    spectators: list[str] | None = None,
    finish: bool = True,
    public_id: str | None = None,
) -> int:
    """Save the room (one player per seat with these guest ids, plus spectators),
    start the game, append its whole log, save Posso sheet rows as the hands
    end, and finish it when it is over (unless `finish` is false)."""
    players = [
        PlayerRecord(f"p{i}", f"Player {i}", f"hash{i}", i, guest_id=g)
        for i, g in enumerate(guests)
    ]
    players += [
        PlayerRecord(f"s{i}", f"Watcher {i}", f"shash{i}", None, guest_id=g)
        for i, g in enumerate(spectators or [])
    ]
    room = RoomRecord(code, played.game, played.options, settings or {}, "p0", players)
    await records.save_room(room)
    game_id = await records.start_game(
        code,
        played.game,
        played.options,
        played.seed,
        [f"p{i}" for i in range(played.seats)],
        public_id=public_id,
    )
    for seq, (seat, action) in enumerate(played.actions):
        await records.append_action(game_id, seq, seat, action)
        for ev in played.events[seq + 1]:
            if ev["type"] == "hand_ended" and "row" in ev:
                await records.save_score_hand(game_id, ev["row"]["hand"], ev["row"])
    if finish and played.result is not None:
        await records.finish_game(game_id, played.result)
    return game_id


async def summary_sums(conn: AsyncConnection) -> list[list[Any]]:
    """Every row of the records' sums (app/db/summaries.py), in key order:
    person totals, person pairs, series points."""
    found = []
    for model in (PersonTotal, PersonPair, SeriesPoints):
        table = model.__table__
        rows = await conn.execute(select(table).order_by(*table.primary_key))
        found.append([tuple(r) for r in rows.all()])
    return found


async def stored(records: Records, played: Played, code: str, *args: Any, **kw: Any) -> str:
    """`store`, answering the game's public id: the one pages and routes show."""
    ref = new_game_ref()
    await store(records, played, code, *args, public_id=ref, **kw)
    return ref
