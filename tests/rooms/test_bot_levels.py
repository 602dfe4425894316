"""Bot levels at the table: the host picks one per bot, it is kept with the
seat through a rebuild, a bot standing in for a person plays at normal, and a
level that does not exist is refused in plain words."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.rooms import table as table_module
from app.rooms.manager import RoomManager
from app.store.records import MemoryRecords
from tests.rooms.harness import RecordingConnection, new_room, seat_people, settle
from tests.rooms.tinygame import TINY
from tests.seeds import seeded

pytestmark = pytest.mark.timeout(30)


def replies(conn: RecordingConnection, msg_id: int) -> list[dict[str, Any]]:
    return [
        f.msg
        for f in conn.recorder.frames
        if f.player == conn.player_id and f.msg.get("re") == msg_id
    ]


def seats(conn: RecordingConnection) -> list[dict[str, Any] | None]:
    assert conn.latest_view is not None
    return list(conn.latest_view["room"]["seats"])


async def test_the_host_picks_each_bots_level_and_everyone_sees_it() -> None:
    room = new_room(TINY, settings={"bot_delay": 10})
    (ann,) = await seat_people(room, 1)
    await room.handle(ann, 1, "cmd", {"type": "add_bot", "level": "strong"})
    await room.handle(ann, 2, "cmd", {"type": "add_bot", "level": "easy", "seat": 3})
    await room.handle(ann, 3, "cmd", {"type": "add_bot"})  # normal unless asked
    shown = seats(ann)
    assert [s and s["level"] for s in shown] == [None, "strong", "normal", "easy"]
    assert [s and s["bot"] for s in shown] == [False, True, True, True]
    added = [
        f.msg["event"]
        for f in ann.recorder.frames
        if f.msg.get("event", {}).get("what") == "bot_added"
    ]
    assert [e["level"] for e in added] == ["strong", "easy", "normal"]
    bots = [p for p in room.players.values() if p.is_bot]
    assert sorted(p.bot_level or "" for p in bots) == ["easy", "normal", "strong"]
    await room.shutdown()


@pytest.mark.parametrize("level", ["expert", "", 3, None, ["strong"], "Strong"])
async def test_a_level_that_does_not_exist_is_refused_and_adds_nothing(level: Any) -> None:
    room = new_room(TINY)
    (ann,) = await seat_people(room, 1)
    before = dict(room.players)
    await room.handle(ann, 9, "cmd", {"type": "add_bot", "level": level})
    (reply,) = replies(ann, 9)
    assert reply["error"]["code"] == "bad_level"
    assert reply["error"]["message"].startswith("level must be one of easy, normal, strong")
    assert room.players == before
    await room.shutdown()


async def test_a_bots_level_survives_a_rebuild_from_storage() -> None:
    records = MemoryRecords()
    room = new_room(TINY, settings={"bot_delay": 10}, records=records)
    (ann,) = await seat_people(room, 1)
    await room.handle(ann, 1, "cmd", {"type": "add_bot", "level": "strong"})
    await room.handle(ann, 2, "cmd", {"type": "add_bot", "level": "easy"})
    await room.handle(ann, 3, "cmd", {"type": "start"})
    await room.shutdown()
    manager = RoomManager(records, {"tiny": TINY}, seeded("test_bot_levels"))
    assert await manager.recover() == 1
    again = await manager.find(room.code)
    assert again is not None and again.status == "playing"
    assert [again.bots.bot_level(s) for s in range(3)] == ["normal", "strong", "easy"]
    assert again.room_public()["seats"][1]["level"] == "strong"
    await again.shutdown()


async def test_a_bot_standing_in_for_a_person_plays_at_normal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ann and Bob go away; bots play their seats at normal, and the strong
    bot the host added plays strong."""
    asked: list[tuple[int, str]] = []
    bot_move = table_module.Table.bot_move

    def spy(self: table_module.Table, seat: int, level: str = "normal") -> Any:
        asked.append((seat, level))
        return bot_move(self, seat, level)

    monkeypatch.setattr(table_module.Table, "bot_move", spy)
    room = new_room(TINY, options={"hand": 6}, settings={"disconnect_grace": 0.05})
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "add_bot", "level": "strong"})
    await room.handle(ann, 2, "cmd", {"type": "start"})
    await room.disconnect(bob)
    await room.disconnect(ann)
    for _ in range(300):
        if room.status != "playing":
            break
        await asyncio.sleep(0.01)
    assert room.status == "finished", "the bots did not finish the game"
    assert room.table.auto == set()  # cleared as the game ended
    assert {seat: level for seat, level in asked} == {0: "normal", 1: "normal", 2: "strong"}
    await room.shutdown()


async def test_a_person_who_leaves_mid_game_is_played_on_at_normal() -> None:
    room = new_room(TINY, settings={"bot_delay": 10})
    ann, _bob, cy = await seat_people(room, 3)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    await room.handle(cy, 2, "cmd", {"type": "leave"})
    await settle()
    assert room.players[cy.player_id].is_bot
    assert room.bots.bot_level(2) == "normal"
    assert room.room_public()["seats"][2]["level"] == "normal"
    await room.shutdown()
