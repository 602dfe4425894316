"""MemoryRecords keeps the promises the rooms rely on (records.py, Records)."""

from __future__ import annotations

import dataclasses

import pytest

from app.store.records import MemoryRecords, PlayerRecord, RoomRecord


async def test_actions_append_strictly_in_order() -> None:
    rec = MemoryRecords()
    gid = await rec.start_game("ROOM01", "tiny", {}, 7, ["p1", "p2"])
    await rec.append_action(gid, 0, 0, {"type": "bid", "n": 1})
    with pytest.raises(ValueError, match="out of order"):
        await rec.append_action(gid, 0, 1, {"type": "bid", "n": 2})  # a repeated seq
    with pytest.raises(ValueError, match="out of order"):
        await rec.append_action(gid, 2, 1, {"type": "bid", "n": 2})  # a gap
    assert rec.games[gid].actions == [(0, {"type": "bid", "n": 1})]


async def test_live_rooms_are_open_rooms_with_their_unfinished_game() -> None:
    rec = MemoryRecords()
    player = PlayerRecord("p1", "Ann", "h" * 64, 0)
    await rec.save_room(RoomRecord("OPEN01", "tiny", {}, {}, "p1", [player]))
    await rec.save_room(RoomRecord("SHUT01", "tiny", {}, {}, "p1", [player], closed=True))
    done = await rec.start_game("OPEN01", "tiny", {}, 1, ["p1"])
    await rec.finish_game(done, {"places": [[0]], "scores": [0]})
    live = await rec.start_game("OPEN01", "tiny", {}, 2, ["p1"])
    rooms = await rec.live_rooms()
    assert [(r.code, g.game_id if g else None) for r, g in rooms] == [("OPEN01", live)]


def test_a_player_record_copy_is_equal_and_apart() -> None:
    """Rooms copy their people to tell what a command changed: a copy equal
    in every field, whose changes never reach the original."""
    original = PlayerRecord(
        "p1", "Ann", "hash", 2, guest_id="g1", account_id=7, bot_level="strong", lent=True
    )
    copy = original.copy()
    assert copy == original and copy is not original
    assert dataclasses.asdict(copy) == dataclasses.asdict(original)
    copy.seat, copy.name = None, "Bea"
    assert (original.seat, original.name) == (2, "Ann")
