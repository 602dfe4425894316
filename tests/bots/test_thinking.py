"""The pool strong bots think in: real worker processes at a lower priority,
a bounded queue, a cap on each job, a pool that outlives a killed worker, a
seed that gives the same move in a worker as on the loop."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import time
from collections.abc import AsyncIterator

import pytest

from app.bots.thinking import WORKER_NICE, InlineThinker, Job, PoolThinker, searches, think
from app.games import GAMES
from tests.bots.test_search import decisions

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def pool() -> AsyncIterator[PoolThinker]:
    thinker = PoolThinker(workers=1, limit=2)
    thinker.open()
    try:
        yield thinker
    finally:
        await thinker.aclose()


async def answer(thinker: PoolThinker, cap: float, fn: object, *args: object) -> object:
    pending = thinker.call(cap, fn, *args)  # type: ignore[arg-type]
    assert pending is not None
    return await pending


def jobs(n: int) -> list[Job]:
    """Big Two moves where the strong bot has more than one candidate."""
    game = GAMES["bigtwo"]
    found = []
    for state, seat in decisions("bigtwo", 4, {}, seed=3)[:n]:
        view, legal = game.view(state, seat), game.legal_actions(state, seat)
        found.append(Job("bigtwo", "strong", view, legal, seat, 1000 + seat, cap=60.0))
    return found


def test_only_a_strong_bot_that_is_more_than_its_heuristic_searches() -> None:
    assert searches("bigtwo", "strong") and searches("possession", "strong")
    assert not searches("bigtwo", "normal") and not searches("bigtwo", "easy")
    assert not searches("possum", "strong")  # its strong level is the heuristic


async def test_a_job_gives_the_same_move_in_a_worker_as_on_the_loop(pool: PoolThinker) -> None:
    """The seed and the playout budget decide: a game replays exactly."""
    found = jobs(3)
    assert found
    inline = InlineThinker()
    for job in found:
        here = inline.submit(job)
        assert here is not None
        there = pool.submit(job)
        assert there is not None
        assert await there == await here == think(job)
    assert pool.started == 1 and pool.pending == 0


async def test_workers_run_at_a_lower_priority_than_the_server(pool: PoolThinker) -> None:
    mine = os.nice(0)
    assert await answer(pool, 5, os.nice, 0) == min(19, mine + WORKER_NICE)
    assert await answer(pool, 5, os.getpid) != os.getpid()


async def test_a_full_queue_refuses_at_once(pool: PoolThinker) -> None:
    busy = [pool.call(10, time.sleep, 1.0) for _ in range(2)]
    assert all(b is not None for b in busy) and pool.pending == 2
    (job,) = jobs(1)
    assert pool.submit(job) is None  # at once: the caller plays its heuristic move
    await asyncio.gather(*(b for b in busy if b is not None))
    assert pool.pending == 0
    assert pool.submit(job) is not None  # room again


async def test_a_job_past_its_cap_is_stopped_and_the_worker_goes_on(pool: PoolThinker) -> None:
    pid = await answer(pool, 5, os.getpid)
    # select() answers ([], [], []) after 30 s; stopped at 0.2 s it gives None
    assert await answer(pool, 0.2, select.select, [], [], [], 30) is None
    assert await answer(pool, 5, select.select, [], [], [], 0) == ([], [], [])
    assert await answer(pool, 5, os.getpid) == pid  # the same worker, still serving


async def test_a_killed_worker_fails_its_job_and_the_next_job_gets_a_new_pool(
    pool: PoolThinker,
) -> None:
    pid = await answer(pool, 5, os.getpid)
    pending = pool.call(60, time.sleep, 30)
    assert pending is not None
    await asyncio.sleep(0.2)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(Exception) as failed:
        await asyncio.wait_for(pending, 20)
    assert type(failed.value).__name__ == "BrokenProcessPool"
    assert pool.pending == 0
    again = await answer(pool, 5, os.getpid)
    assert again != pid and pool.started == 2
    (job,) = jobs(1)
    assert await answer(pool, 60, think, job) == think(job)


async def test_a_closed_thinker_refuses_and_its_workers_are_gone() -> None:
    thinker = PoolThinker(workers=1, limit=2)
    (job,) = jobs(1)
    assert thinker.submit(job) is None, "nothing is taken before the app opens it"
    thinker.open()
    pid = await answer(thinker, 5, os.getpid)
    assert isinstance(pid, int)
    await thinker.aclose()
    assert thinker.submit(job) is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
