"""A bot that searches thinks off the loop and outside the room's lock: the
room goes on meanwhile, plays the answer only if the game has not moved on,
and plays the heuristic's move when the queue is full, the search fails or
its answer is late.  The thinker here hands each job to the test, which
answers it (or not) when it chooses."""

from __future__ import annotations

import asyncio
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pytest

from app.bots.thinking import InlineThinker, Job, PoolThinker, heuristic_move
from app.games import GAMES
from app.rooms.room import Room
from app.store.records import MemoryRecords
from tests.rooms.harness import (
    Recorder,
    RecordingConnection,
    attach,
    new_room,
    seat_people,
    settle,
)
from tests.rooms.tinygame import TINY

pytestmark = pytest.mark.timeout(30)


class HeldThinker:
    """Every strong bot searches; each job waits for the test to answer it."""

    def __init__(self, *, full: bool = False, deadline: float = 10.0) -> None:
        self.full = full
        self.cap = 1.0
        self.deadline = deadline
        self.jobs: list[Job] = []
        self.answers: list[asyncio.Future[dict[str, Any] | None]] = []

    def searches(self, game: str, level: str) -> bool:
        return level == "strong"

    def submit(self, job: Job) -> asyncio.Future[dict[str, Any] | None] | None:
        self.jobs.append(job)
        if self.full:
            return None
        answer: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self.answers.append(answer)
        return answer


async def strong_room(
    thinker: HeldThinker, *, bidding: bool, records: MemoryRecords | None = None
) -> tuple[Room, RecordingConnection, MemoryRecords]:
    """Ann in seat 0 and a strong bot in seat 1, the game started; the bot's
    first wait has fired (a delay of 0)."""
    records = records or MemoryRecords()
    room = new_room(TINY, options={"bidding": bidding}, settings={"posso_window": 15},
                    records=records)  # fmt: skip
    room.bots.thinker = thinker
    (ann,) = await seat_people(room, 1)
    await room.handle(ann, 1, "cmd", {"type": "add_bot", "level": "strong"})
    await room.handle(ann, 2, "cmd", {"type": "start"})
    await settle()
    return room, ann, records


def log(records: MemoryRecords) -> list[tuple[int | None, dict[str, Any]]]:
    (game,) = records.games.values()
    return list(game.actions)


def acks(conn: RecordingConnection, msg_id: int) -> list[dict[str, Any]]:
    return [f.msg for f in conn.recorder.frames if f.msg.get("re") == msg_id]


async def test_the_lock_is_free_while_a_strong_bot_thinks_and_the_room_goes_on() -> None:
    thinker = HeldThinker()
    room, ann, records = await strong_room(thinker, bidding=True)
    (job,) = thinker.jobs  # both bid at once: the bot is thinking
    assert job.seat == 1 and job.seq == 0 and job.level == "strong"
    assert not room.lock.locked()
    assert room.timers.get("bot:1") is not None and room.timers.get("bot:1").kind == "think"
    # meanwhile Ann chats and bids, and is answered at once
    await room.handle(ann, 3, "cmd", {"type": "chat", "text": "your move, bot"})
    await room.handle(ann, 4, "action", {"type": "bid", "n": 1})
    assert acks(ann, 3)[0]["ok"] and acks(ann, 4)[0]["ok"]
    assert log(records) == [(0, {"type": "bid", "n": 1})]
    await room.shutdown()
    assert thinker.answers[0].cancelled(), "a room that stops drops its bots' thinking"


async def test_an_answer_for_a_game_that_moved_on_is_dropped_and_the_bot_thinks_again() -> None:
    thinker = HeldThinker()
    room, ann, records = await strong_room(thinker, bidding=True)
    await room.handle(ann, 3, "action", {"type": "bid", "n": 1})  # seq 0 -> 1 while it thinks
    thinker.answers[0].set_result({"type": "bid", "n": 2})  # thought about seq 0: stale
    await settle()
    assert len(thinker.jobs) == 2, "the bot thinks again about the game as it is"
    assert thinker.jobs[1].seq == 1 and thinker.jobs[1].view != thinker.jobs[0].view
    assert log(records) == [(0, {"type": "bid", "n": 1})]  # the stale answer was not played
    thinker.answers[1].set_result({"type": "bid", "n": 0})
    await settle()
    assert log(records)[:2] == [(0, {"type": "bid", "n": 1}), (1, {"type": "bid", "n": 0})]
    await room.shutdown()


async def test_a_full_queue_gives_the_heuristic_move_at_once() -> None:
    thinker = HeldThinker(full=True)
    room, _ann, records = await strong_room(thinker, bidding=True)
    (job,) = thinker.jobs
    # played within the same wake-up: no wait for an answer was ever set
    assert log(records) == [(1, heuristic_move(job))]
    assert room.timers.fired["think"] == 0 and room.timers.fired["thought"] == 0
    await room.shutdown()


async def test_a_search_that_fails_gives_the_heuristic_move() -> None:
    """The dependency fails: a worker process died under the search."""
    thinker = HeldThinker()
    room, _ann, records = await strong_room(thinker, bidding=True)
    thinker.answers[0].set_exception(BrokenProcessPool("a worker died"))
    await settle()
    assert log(records) == [(1, heuristic_move(thinker.jobs[0]))]
    await room.shutdown()


async def test_an_answer_past_the_deadline_gives_the_heuristic_move_and_is_then_ignored() -> None:
    thinker = HeldThinker(deadline=0.05)
    room, ann, records = await strong_room(thinker, bidding=True)
    (job,) = thinker.jobs
    await asyncio.sleep(0.15)
    await settle()
    assert log(records) == [(1, heuristic_move(job))]
    assert thinker.answers[0].cancelled()  # out of the queue, if it was still there
    await room.handle(ann, 3, "action", {"type": "bid", "n": 1})
    await settle()
    assert len(log(records)) == 2 and len(thinker.jobs) == 1
    await room.shutdown()


async def test_a_stopped_search_gives_the_heuristic_move() -> None:
    """A search that ran past its cap in the worker answers None."""
    thinker = HeldThinker()
    room, ann, records = await strong_room(thinker, bidding=False)
    await room.handle(ann, 3, "action", {"type": "play", "card": room.state.hands[0][0]})
    await settle()
    (job,) = thinker.jobs
    thinker.answers[0].set_result(None)
    await settle()
    assert log(records)[1] == (1, heuristic_move(job))
    await room.shutdown()


async def play_until(room: Room, records: MemoryRecords, n: int) -> list[Any]:
    for _ in range(50_000):
        if room.status != "playing" or (records.games and len(log(records)) >= n):
            break
        await asyncio.sleep(0.005)
    return log(records)[:n]


@pytest.mark.timeout(300)
async def test_a_strong_bot_in_a_worker_plays_what_it_would_on_the_loop() -> None:
    """The same room twice, the strong bot thinking on the loop, then in a
    real worker process: the same seed gives the same game."""
    games = []
    # caps a loaded test machine cannot reach: no search stops short; and the
    # worker at the test's own priority (tests/bots/test_thinking.py checks
    # the server's is lower), or a loaded machine starves it
    pool = PoolThinker(1, 2, cap=60, deadline=120, nice=0)
    for thinker in (InlineThinker(60, 120), pool):
        records = MemoryRecords()
        room = new_room(GAMES["bigtwo"], records=records, code="STRONG", cls=Room)
        room.bots.thinker = thinker
        host, _ = await room.join("Host", spectator=True)
        conn = await attach(room, host, Recorder())
        await room.handle(conn, 1, "cmd", {"type": "add_bot", "level": "strong"})
        if isinstance(thinker, PoolThinker):
            thinker.open()
        try:
            await room.handle(conn, 2, "cmd", {"type": "start"})  # three normal bots fill up
            games.append(await play_until(room, records, 16))
        finally:
            await room.shutdown()
            if isinstance(thinker, PoolThinker):
                await thinker.aclose()
                assert thinker.started == 1  # it did think there
    assert len(games[0]) == 16
    assert games[1] == games[0]
