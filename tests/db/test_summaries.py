"""The records' sums (app/db/summaries.py) stay exact when a result is
written again: they equal the sums counted afresh from the seats."""

from __future__ import annotations

from typing import Any

from app.db import standings
from app.db.people import person_of
from app.db.records import DbRecords
from app.db.summaries import recount
from tests.db.stored import store, summary_sums
from tests.db.tinygame import TINY, play

GUESTS = ["guest-a" * 6, "guest-b" * 6, "guest-c" * 6]


async def _sums(records: DbRecords) -> tuple[list[Any], list[Any]]:
    async with records.engine.connect() as conn:
        return await summary_sums(conn)


async def test_a_result_written_again_replaces_the_old_one_in_the_sums(
    records: DbRecords,
) -> None:
    first = play(TINY, 3, {}, seed=3)
    gid = await store(records, first, "ROOM01", GUESTS)
    await store(records, play(TINY, 3, {}, seed=4), "ROOM02", GUESTS)
    turned = {"places": [[2], [1], [0]], "scores": [1, 2, 3]}
    await records.finish_game(gid, turned)  # a repair writes the result again
    kept = await _sums(records)
    async with records.engine.begin() as conn:
        await conn.run_sync(lambda sync: recount(sync))
    assert await _sums(records) == kept
    ann, cat = person_of(GUESTS[0], None), person_of(GUESTS[2], None)
    assert ann is not None and cat is not None
    async with records.sessions() as s:
        rec = await standings.records(s, ann)
        h2h = await standings.head_to_head(s, cat, ann)
    assert rec["played"] == 2
    assert rec["games"][0]["places"].get("3", 0) >= 1  # Ann is last in the game turned over
    assert h2h["together"] == 2 and h2h["games"][0]["first_higher"] >= 1
