"""The records' sums (app/db/summaries.py) stay exact when a result is
written again: they equal the sums counted afresh from the seats."""

from __future__ import annotations

from typing import Any

import pytest

from app.db import standings
from app.db.people import person_of
from app.db.records import DbRecords
from app.db.summaries import recount
from tests.db.stored import store, summary_sums
from tests.db.tinygame import TINY, engines_on_disk, play

GUESTS = ["guest-a" * 6, "guest-b" * 6, "guest-c" * 6]


async def _sums(records: DbRecords) -> list[list[Any]]:
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


async def test_a_big_two_result_written_again_recounts_the_rooms_series(
    records: DbRecords,
) -> None:
    bigtwo = next((e for e, _, _ in engines_on_disk() if e.name == "bigtwo"), None)
    if bigtwo is None:
        pytest.skip("the Big Two engine is not on disk")
    four = [*GUESTS, "guest-d" * 6]
    games = [play(bigtwo, 4, {}, seed=s) for s in (1, 2)]
    first = await store(records, games[0], "ROOM01", four)
    await store(records, games[1], "ROOM01", four)
    added = await _sums(records)
    points = {row[1]: row[3] for row in added[2]}  # player_id -> points
    want = {f"p{s}": 0 for s in range(4)}
    for g in games:
        for rank, (seat,) in enumerate(g.result["places"]):  # type: ignore[index]
            want[f"p{seat}"] += (3, 2, 1, 0)[rank]
    assert points == want
    await records.finish_game(first, {"places": [[3], [2], [1], [0]], "scores": [4, 3, 2, 1]})
    kept = await _sums(records)
    async with records.engine.begin() as conn:
        await conn.run_sync(lambda sync: recount(sync))
    assert await _sums(records) == kept and kept[2] != added[2]
