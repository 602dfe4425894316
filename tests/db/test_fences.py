"""Every durable write of a room is fenced on PostgreSQL (app/db/writes.py,
`fenced`; app/db/records.py, `_PG_APPENDS`): once a takeover has raised the
room's owner epoch, an old owner that was paused past its lease and wakes up
writes nothing - not the room, its people, a game, a result, a score row, a
snapshot, a close or an action - and a write already running when the
takeover comes either lands before it or is refused, never after it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from sqlalchemy import func, select, text

from app.db.models import ActionRow, GameRow, ScoreHand
from app.db.models import Snapshot as SnapshotRow
from app.db.records import DbRecords
from app.db.session import make_engine
from app.store.records import Fenced, PlayerRecord, RoomRecord, Snapshot
from tests.db.test_records import POSSO_ROW

CODE = "FENCE1"
OLD, NEW = 1, 2


def _room(host: str = "p0", closed: bool = False) -> RoomRecord:
    people = [PlayerRecord(f"p{i}", f"P{i}", "h" * 64, i) for i in range(3)]
    return RoomRecord(CODE, "posso", {}, {}, host, people, closed=closed)


#: PostgreSQL only: the one backend several processes share (the app refuses
#: to start them on SQLite); `records` and `db_url` come from tests/db/conftest.py
pytestmark = pytest.mark.parametrize(
    "backend_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


async def _taken_over(records: DbRecords) -> int:
    """A room played by the owner with epoch OLD, then taken over by NEW; the
    game's id (one action logged by OLD)."""
    assert await records.create_room(_room())
    assert await records.claim_room(CODE, OLD) == (True, OLD)
    gid = await records.start_game(CODE, "posso", {}, 7, ["p0", "p1", "p2"], epoch=OLD)
    await records.append_action(gid, 0, 0, {"type": "draw"}, epoch=OLD)
    assert await records.claim_room(CODE, NEW) == (True, NEW)
    return gid


async def _count(records: DbRecords, query: Any) -> int:
    async with records.engine.connect() as conn:
        return int(await conn.scalar(query) or 0)


#: each write as the old owner would make it, and what must be unchanged after
WRITES: dict[str, Callable[[DbRecords, int, int], Awaitable[Any]]] = {
    "save_room": lambda r, gid, e: r.save_room(_room(host="p2"), epoch=e),
    "close_room": lambda r, gid, e: r.save_room(_room(closed=True), epoch=e),
    "start_game": lambda r, gid, e: r.start_game(CODE, "posso", {}, 8, ["p0", "p1"], epoch=e),
    "finish_game": lambda r, gid, e: r.finish_game(gid, {"places": [[0]]}, epoch=e),
    "save_score_hand": lambda r, gid, e: r.save_score_hand(gid, 2, POSSO_ROW, epoch=e),
    "save_snapshot": lambda r, gid, e: r.save_snapshot(gid, Snapshot(1, "x", b"s"), epoch=e),
    "append_action": lambda r, gid, e: r.append_action(gid, 1, 1, {"type": "x"}, epoch=e),
}


async def _state(records: DbRecords, gid: int) -> tuple[Any, ...]:
    """Everything the writes above could change."""
    found = await records.load_room(CODE)
    assert found is not None, "the room is no longer open"
    room, game = found
    return (
        room.host_player_id,
        await _count(records, select(func.count()).select_from(GameRow)),
        await _count(records, select(func.count()).where(GameRow.result.is_not(None))),
        await _count(records, select(func.count()).select_from(ScoreHand)),
        await _count(records, select(func.count()).select_from(SnapshotRow)),
        await records.action_count(gid),
        game is not None and game.game_id,
    )


@pytest.mark.parametrize("write", list(WRITES))
async def test_a_paused_old_owner_is_refused_every_write_after_a_takeover(
    records: DbRecords, write: str
) -> None:
    gid = await _taken_over(records)
    before = await _state(records, gid)
    with pytest.raises(Fenced):
        await WRITES[write](records, gid, OLD)
    assert await _state(records, gid) == before
    await WRITES[write](records, gid, NEW)  # the new owner's own write goes in
    if write != "close_room":
        assert await _state(records, gid) != before


async def test_each_action_is_tagged_with_the_epoch_that_wrote_it(records: DbRecords) -> None:
    gid = await _taken_over(records)
    await records.append_action(gid, 1, 1, {"type": "x"}, epoch=NEW)
    assert await records.action_at(gid, 0) == (0, {"type": "draw"}, OLD)
    assert await records.action_at(gid, 1) == (1, {"type": "x"}, NEW)
    assert await records.action_at(gid, 2) is None
    tags = select(ActionRow.epoch).where(ActionRow.game_id == gid).order_by(ActionRow.seq)
    async with records.engine.connect() as conn:
        assert list(await conn.scalars(tags)) == [OLD, NEW]


@pytest.mark.parametrize("write", ["append_action", "save_room", "finish_game"])
async def test_a_write_running_during_a_takeover_waits_for_it_and_is_refused(
    records: DbRecords, db_url: str, write: str
) -> None:
    """The takeover's UPDATE of the room's row is under way (not committed)
    when the old owner's write starts: the write waits for the row, then sees
    the new epoch.  Read without a lock, the old epoch let it land."""
    gid = await _taken_over(records)
    await records.claim_room(CODE, 0)  # nothing: only ever raised
    engine = make_engine(db_url)
    try:
        async with engine.connect() as takeover:
            await takeover.execute(
                text("UPDATE rooms SET epoch = 3 WHERE code = :c AND NOT closed"), {"c": CODE}
            )  # a takeover's claim_room, in flight
            pending = asyncio.ensure_future(WRITES[write](records, gid, NEW))
            await asyncio.sleep(0.5)
            assert not pending.done(), "the write did not wait for the room's row"
            await takeover.commit()
            with pytest.raises(Fenced):
                await asyncio.wait_for(pending, 10)
    finally:
        await engine.dispose()
