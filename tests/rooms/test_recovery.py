"""What a crash or a failed write can leave behind, and how a rebuilt room
repairs it: a game over but not finished, a lost score row, an append whose
commit went through while its answer was lost, a wait that must resume with
the time it had left; and rebuilding from a snapshot plus the log's tail."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from app.games import GAMES
from app.rooms import snapshots
from app.rooms.errors import RoomError
from app.rooms.manager import RoomManager
from app.rooms.room import Room
from app.store.records import MemoryRecords, Snapshot
from tests.rooms.harness import Recorder, attach, new_room, seat_people, settle
from tests.rooms.tinygame import TINY
from tests.seeds import seeded

pytestmark = pytest.mark.timeout(120)

POSSO_FAST = {"bot_delay": 0, "posso_window": 0, "posso_answer": 0, "cut": 0}


class Faulty(MemoryRecords):
    """Records whose writes fail on demand, like a database that went away."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_finish = False
        self.fail_rows = False
        self.lose_answer_at: int | None = None  # commit action n, then "lose the answer"
        self.fail_count = False

    async def finish_game(self, game_id: int, result: dict[str, Any], epoch: int = 0) -> None:
        if self.fail_finish:
            raise ConnectionError("database unavailable")
        await super().finish_game(game_id, result, epoch)

    async def save_score_hand(
        self, game_id: int, hand: int, row: dict[str, Any], epoch: int = 0
    ) -> None:
        if self.fail_rows:
            raise ConnectionError("database unavailable")
        await super().save_score_hand(game_id, hand, row, epoch)

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        await super().append_action(game_id, seq, seat, action, epoch)
        if seq == self.lose_answer_at:
            raise ConnectionError("connection reset after COMMIT")

    async def action_count(self, game_id: int) -> int:
        if self.fail_count:
            raise ConnectionError("database unavailable")
        return await super().action_count(game_id)

    async def action_at(
        self, game_id: int, seq: int
    ) -> tuple[int | None, dict[str, Any], int | None] | None:
        if self.fail_count:
            raise ConnectionError("database unavailable")
        return await super().action_at(game_id, seq)


async def play_out(room: Room, rng: random.Random, *, stop_before_end: bool = False) -> None:
    """Play every seat with its legal actions until the game ends (or, with
    `stop_before_end`, until one move is left)."""
    for _ in range(100_000):
        if room.status != "playing":
            return
        if not room.to_act:
            await asyncio.sleep(0)
            continue
        seat = min(room.to_act)
        legal = room.game.legal_actions(room.state, seat)
        action = rng.choice(legal)
        if stop_before_end:
            after, _ = room.game.apply(room.state, seat, action)
            if room.game.result(after) is not None:
                return
        await room.play(seat, action)
    raise AssertionError("the game did not end")


async def restart(records: MemoryRecords, code: str, games: dict[str, Any]) -> Room:
    manager = RoomManager(records, games, seeded("tests/rooms/test_recovery.py"))
    assert await manager.recover() >= 1
    room = await manager.find(code)
    assert room is not None
    return room


@pytest.mark.parametrize("seed", [3, 4])
async def test_a_game_whose_result_was_lost_is_finished_on_recovery(seed: int) -> None:
    records = Faulty()
    room = new_room(TINY, options={"bidding": False, "hand": 2}, records=records)
    rng = random.Random(seed)
    (ann, _) = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    await play_out(room, rng, stop_before_end=True)
    records.fail_finish = True  # the last move is stored, its result write fails
    await play_out(room, rng)
    (game,) = records.games.values()
    assert game.result is None and len(game.actions) == room.seq
    await room.shutdown()
    # the server dies here; the next one finds a game that is over but not finished
    records.fail_finish = False
    again = await restart(records, room.code, {"tiny": TINY})
    assert again.status == "finished", f"seed {seed}: the room must not stay 'playing'"
    assert game.result == TINY.result(again.state)
    host = again.players[ann.player_id]
    conn = await attach(again, host, Recorder())
    await again.handle(conn, 2, "cmd", {"type": "rematch"})
    assert again.status == "playing" and len(records.games) == 2
    await again.shutdown()


async def test_a_result_write_that_fails_is_written_again_before_the_next_game() -> None:
    records = Faulty()
    room = new_room(TINY, options={"bidding": False, "hand": 1}, records=records)
    (ann, _) = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    records.fail_finish = True
    await play_out(room, random.Random(1))
    assert room.status == "finished" and records.games[1].result is None
    records.fail_finish = False
    await room.handle(ann, 2, "cmd", {"type": "rematch"})
    assert records.games[1].result is not None and room.status == "playing"
    await room.shutdown()


@pytest.mark.parametrize("seed", [5])
async def test_a_lost_score_row_is_written_again(seed: int) -> None:
    posso = GAMES["posso"]
    records = Faulty()
    room = new_room(posso, options={"start_hand": 8}, settings=POSSO_FAST, records=records)
    (ann, _) = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    rng = random.Random(seed)
    records.fail_rows = True
    while room.status == "playing" and not records.games[1].result:
        if room.state.sheet:  # hand 8 ended: its row could not be stored
            break
        await play_out_one(room, rng)
    assert room.state.sheet and not records.score_rows.get(1), f"seed {seed}"
    records.fail_rows = False
    await play_out_one(room, rng)  # the next move writes what is missing
    assert set(records.score_rows[1]) == {8}
    # and a crash between a move and its row is repaired when the room is rebuilt
    records.fail_rows = True
    while len(room.state.sheet) < 2 and room.status == "playing":
        await play_out_one(room, rng)
    await room.shutdown()
    records.fail_rows = False
    again = await restart(records, room.code, {"posso": posso})
    assert set(records.score_rows[1]) == {row["hand"] for row in again.state.sheet} == {8, 9}
    await again.shutdown()


async def play_out_one(room: Room, rng: random.Random) -> None:
    for _ in range(1000):
        if room.to_act:
            seat = min(room.to_act)
            await room.play(seat, rng.choice(room.game.legal_actions(room.state, seat)))
            return
        await asyncio.sleep(0.001)  # a Posso window closing by its timer
    raise AssertionError("nobody to act")


async def test_an_append_whose_answer_was_lost_is_settled_by_reading_the_log() -> None:
    records = Faulty()
    room = new_room(TINY, options={"bidding": False}, records=records)
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    records.lose_answer_at = 0
    seat = min(room.to_act)
    conn = ann if seat == 0 else bob
    action = TINY.legal_actions(room.state, seat)[0]
    await room.handle(conn, 2, "action", action)
    (reply,) = [f.msg for f in conn.recorder.frames if f.msg.get("re") == 2]
    assert reply.get("ok") is True, "the move is in the log: it happened"
    assert room.seq == 1 == len(records.games[1].actions)
    # the next move is not refused as out of order
    seat = min(room.to_act)
    await room.play(seat, TINY.legal_actions(room.state, seat)[0])
    assert room.seq == 2 == len(records.games[1].actions)
    await room.shutdown()


class TakenOver(Faulty):
    """At action `lose_answer_at` the room is taken over before the append
    gets in: the new owner (epoch 2) logs its own row at that position - the
    very same move, even - and this owner's append gets no answer."""

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        if seq != self.lose_answer_at:
            await super().append_action(game_id, seq, seat, action, epoch)
            return
        self.epochs[self.games[game_id].room_code] = 2
        await MemoryRecords.append_action(self, game_id, seq, seat, action, 2)
        raise ConnectionError("connection reset")


async def test_an_append_with_no_answer_is_not_told_when_a_newer_owner_holds_that_row() -> None:
    """Counting rows would say the move landed; the row at that position is
    the new owner's, so this owner must not announce it (it steps down at its
    next write, which is fenced)."""
    records = TakenOver()
    room = new_room(TINY, options={"bidding": False}, records=records)
    room.table.epoch = 1
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    records.lose_answer_at = 0
    seat = min(room.to_act)
    conn = ann if seat == 0 else bob
    await room.handle(conn, 2, "action", TINY.legal_actions(room.state, seat)[0])
    (reply,) = [f.msg for f in conn.recorder.frames if f.msg.get("re") == 2]
    assert reply["error"]["code"] == "storage_error"
    assert room.seq == 0
    told = [f.msg for f in ann.recorder.frames if f.msg.get("event", {}).get("type") == "played"]
    assert told == [], "a move the log holds as another owner's was announced"
    await room.shutdown()


async def test_an_append_with_no_answer_and_no_way_to_read_the_log_is_settled_later() -> None:
    records = Faulty()
    room = new_room(TINY, options={"bidding": False}, records=records)
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    records.lose_answer_at = 0
    records.fail_count = True
    seat = min(room.to_act)
    conn = ann if seat == 0 else bob
    first = TINY.legal_actions(room.state, seat)[0]
    await room.handle(conn, 2, "action", first)
    (reply,) = [f.msg for f in conn.recorder.frames if f.msg.get("re") == 2]
    assert reply["error"]["code"] == "storage_error"
    assert room.seq == 0
    # the database is back: the next message finds the move in the log and
    # tells everyone about it before anything else
    records.fail_count = False
    await room.handle(conn, 3, "action", first)
    assert room.seq == 1 == len(records.games[1].actions)
    assert records.games[1].actions[0][1] == first
    played = [
        f.msg["event"]
        for f in ann.recorder.frames
        if f.player == ann.player_id and f.msg.get("event", {}).get("type") == "played"
    ]
    assert len(played) == 1, "the move is told once, when it is known to have happened"
    await room.shutdown()


async def test_a_wait_resumes_with_the_time_it_had_left_after_a_restart() -> None:
    posso = GAMES["posso"]
    records = MemoryRecords()
    settings = {**POSSO_FAST, "posso_window": 15, "turn_timer": 40}
    manager = RoomManager(records, {"posso": posso}, seeded("tests/rooms/test_recovery.py"))
    # no cut: the deal's upturn opens a Posso window at once (two players: the
    # phantom turns a card the dealer may call)
    options = {"start_hand": 2, "cutting": "off"}
    room, ann_p, _ = await manager.create("posso", options, "Ann", settings)
    await room.join("Bob")
    ann = await attach(room, ann_p, Recorder())
    await room.handle(ann, 1, "cmd", {"type": "start"})
    timer = room.waits.timer_json()
    assert timer is not None and timer["kind"] == "posso_window"
    deadline = timer["deadline_ms"]
    await manager.shutdown()
    records.games[1].last_at = time.time() - 10  # the server was down for ten seconds
    again = await restart(records, room.code, {"posso": posso})
    resumed = again.waits.timer_json()
    assert resumed is not None and resumed["kind"] == "posso_window"
    assert 4_000 < resumed["ms_left"] <= 5_500, resumed
    assert resumed["deadline_ms"] < deadline
    await again.shutdown()


@pytest.mark.parametrize("name", ["posso", "possession", "possum", "bigtwo"])
async def test_a_room_rebuilt_from_a_snapshot_and_the_tail_is_the_same_game(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshots, "SNAPSHOT_EVERY", 5)  # short games get one too
    game = GAMES[name]
    records = MemoryRecords()
    seats = 4
    room = new_room(game, settings=POSSO_FAST, records=records, cls=Room)
    room.seeds = lambda: 1234  # the deal this test chooses: no game ends in 8 moves
    host, _ = await room.join("Host", spectator=True)
    conn = await attach(room, host, Recorder())
    for _ in range(seats):
        await room.handle(conn, 1, "cmd", {"type": "add_bot"})
    room.settings = room.settings.model_copy(update={"bot_delay": 10})  # bots wait: we move
    await room.handle(conn, 2, "cmd", {"type": "start"})
    rng = random.Random(7)
    for _ in range(snapshots.SNAPSHOT_EVERY + 3):
        await play_out_one(room, rng)
    assert room.status == "playing", "seed 1234: the game must still be on"
    await settle()
    snap = records.snapshots.get(1)
    assert snap is not None and snap.seq % snapshots.SNAPSHOT_EVERY == 0
    await room.shutdown()
    loaded = await records.load_room(room.code)
    assert loaded is not None and loaded[1] is not None
    assert loaded[1].first_seq == snap.seq and len(loaded[1].actions) == room.seq - snap.seq
    again = await restart(records, room.code, {name: game})
    assert again.state == room.state and again.seq == room.seq
    # a snapshot made by other code is never loaded: the whole log is replayed
    records.snapshots[1] = Snapshot(snap.seq, "other code", b"not a pickle")
    third = await restart(records, room.code, {name: game})
    assert third.state == room.state and third.seq == room.seq
    await again.shutdown()
    await third.shutdown()


@pytest.mark.parametrize("cmd", ["add_bot", "start"])
async def test_an_old_owner_whose_write_is_fenced_steps_down(cmd: str) -> None:
    """After a takeover (a larger epoch stored), the old owner's next write -
    a save of the room, a new game - is refused, and the room steps down."""
    records = MemoryRecords()
    room = new_room(TINY, options={"bidding": False}, records=records)
    room.table.epoch = 1
    moved: list[Room] = []
    room.on_moved = moved.append
    ann, _bob = await seat_people(room, 2)
    records.epochs[room.code] = 2  # another process took the room over
    before = records.rooms[room.code]
    await room.handle(ann, 1, "cmd", {"type": cmd})
    await settle()
    assert moved == [room]
    assert records.rooms[room.code] is before and records.games == {}
    # a change never stored is never acknowledged (the history checker,
    # tests/integration/history.py, saw a paused owner ack a host change)
    (reply,) = [f.msg for f in ann.recorder.frames if f.msg.get("re") == 1]
    assert reply["error"]["code"] == "moved", reply
    with pytest.raises(RoomError) as refused:
        await room.join("Dan")
    assert refused.value.code == "moved"
    assert records.rooms[room.code] is before
    await room.shutdown()
