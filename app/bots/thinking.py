"""Where a strong bot thinks: off the event loop, in a pool of worker processes.

A strong bot's search is pure Python and takes a few hundred milliseconds a
move (docs/bots.md); run on the server's event loop it would hold up every
room for that long, and a thread would not help (the interpreter runs one
thread at a time).  So a room hands its search to a `Thinker`, as a `Job`:
everything the bot may know (its seat's view and legal actions) and a seed.
The room's lock is not held meanwhile; when the answer comes, the room
plays it only if the game has not moved on (app/rooms/bot_driver.py).

`PoolThinker` is the server's: worker processes at a lower priority
(`os.nice` in each worker as it starts), so a busy machine serves people's
moves first and bots' thoughts with what is left.  Its queue is bounded: a
job that would wait behind `limit` others is refused at once (`submit`
answers None) and the bot plays its heuristic move instead.  A job that
overruns its `cap` inside the worker stops there and answers None; a worker
that dies fails its jobs (`BrokenProcessPool`), and the next job starts a
new pool.  The room keeps its own deadline too, for a pool that does not
answer at all.

`InlineThinker` computes the same answer at once on the caller's thread:
for tests and the simulator, whose loop runs on virtual time.

A job's answer depends on the job alone (the search's budget is a number
of playouts, and the job carries its generator's seed), so a game with
strong bots replays exactly, whichever thinker played it - unless a search
ran past its cap, when the bot played its heuristic move instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import os
import random
import signal
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import cache
from time import perf_counter
from types import FrameType
from typing import Any, Protocol, TypeVar

from app.bots.base import Action
from app.bots.levels import bot_for, heuristic_for
from app.core import metrics

log = logging.getLogger(__name__)

T = TypeVar("T")

#: seconds a search may run in a worker: past it the worker stops it and the
#: bot plays its heuristic move.  The search's own wall-clock cap is set to
#: it: a search that takes a loaded machine several times its usual 200 ms
#: still gives the seed's answer, and a person waits two seconds at most
THINK_CAP = 2.0
#: seconds a room waits for an answer (queue and search) before playing the
#: heuristic's move: above THINK_CAP, for a pool that does not answer at all
THINK_DEADLINE = 3.0
#: how much lower a worker's priority is than the server's
WORKER_NICE = 10


@dataclass(frozen=True)
class Job:
    """A bot's move to think about: what its seat may know, and a seed."""

    game: str
    level: str
    view: dict[str, Any]
    legal: list[Action]
    seat: int
    seed: int
    #: the game's sequence number when the job was made (the room's to check)
    seq: int = 0
    cap: float = THINK_CAP


def think(job: Job) -> Action:
    """The bot's choice for `job`, wherever it runs."""
    bot = bot_for(job.game, job.level, wall_cap=job.cap)
    return bot.choose(job.view, job.legal, job.seat, random.Random(job.seed))


def heuristic_move(job: Job) -> Action:
    """What the bot plays when it cannot think: the heuristic's move, from the
    same seed (the room's generators advance the same either way)."""
    return heuristic_for(job.game).choose(job.view, job.legal, job.seat, random.Random(job.seed))


@cache
def searches(game: str, level: str) -> bool:
    """Whether a bot of `game` at `level` searches (and so thinks off the
    loop): the strong level, where it is more than the heuristic."""
    return level == "strong" and bot_for(game, level) is not heuristic_for(game)


class Thinker(Protocol):
    #: seconds a job may search (`Job.cap`)
    cap: float
    #: seconds a room waits for an answer before playing the heuristic's move
    deadline: float

    def searches(self, game: str, level: str) -> bool:
        """Whether a bot of `game` at `level` thinks here (`searches`)."""

    def submit(self, job: Job) -> asyncio.Future[Action | None] | None:
        """Start thinking: the answer to come (None: the search stopped at
        its cap), or None at once when the queue is full."""


class InlineThinker:
    """Thinks at once, on the caller's thread (tests, the simulator)."""

    def __init__(self, cap: float = THINK_CAP, deadline: float = THINK_DEADLINE) -> None:
        self.cap = cap
        self.deadline = deadline

    def searches(self, game: str, level: str) -> bool:
        return searches(game, level)

    def submit(self, job: Job) -> asyncio.Future[Action | None] | None:
        done: asyncio.Future[Action | None] = asyncio.get_running_loop().create_future()
        try:
            done.set_result(think(job))
        except Exception as err:
            done.set_exception(err)
        return done


class Overrun(Exception):
    """A job ran past its cap in a worker."""


def _overrun(signum: int, frame: FrameType | None) -> None:
    raise Overrun


def _start_worker(nice: int) -> None:
    """Each worker as it starts: a lower priority, its own deadline signal, and
    no Ctrl-C (the server stops the pool itself)."""
    os.nice(nice)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, _overrun)


def _capped(cap: float, fn: Callable[..., T], *args: Any) -> T | None:
    """`fn(*args)` in a worker, stopped after `cap` seconds (None then)."""
    signal.setitimer(signal.ITIMER_REAL, cap)
    try:
        return fn(*args)
    except Overrun:
        log.warning("a bot's search ran past %.1f s and was stopped", cap)
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


class PoolThinker:
    """Worker processes at low priority, with a bounded queue."""

    def __init__(
        self,
        workers: int = 1,
        limit: int = 4,
        *,
        cap: float = THINK_CAP,
        deadline: float = THINK_DEADLINE,
        nice: int = WORKER_NICE,
    ) -> None:
        self.workers = workers
        #: jobs waiting or running at most; past it `submit` answers None
        self.limit = limit
        self.cap = cap
        self.deadline = deadline
        self.nice = nice
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        #: jobs in the workers' hands (done callbacks, from the pool's thread,
        #: take them out: a job whose room stopped waiting still counts)
        self._running: set[concurrent.futures.Future[Any]] = set()
        #: refusing jobs: until `open`, and from `aclose` on (the app's lifespan)
        self.closed = True
        #: pools started (the first, and one after each that broke)
        self.started = 0

    def searches(self, game: str, level: str) -> bool:
        return searches(game, level)

    @property
    def pending(self) -> int:
        return len(self._running)

    def submit(self, job: Job) -> asyncio.Future[Action | None] | None:
        started = perf_counter()
        thought = self.call(job.cap, think, job)
        if thought is not None:
            level = metrics.BOT_SECONDS.labels(job.level)
            thought.add_done_callback(lambda _: metrics.since(level, started))
        return thought

    def call(self, cap: float, fn: Callable[..., T], *args: Any) -> asyncio.Future[T | None] | None:
        """Run `fn(*args)` in a worker, stopped after `cap` seconds; None at
        once when the queue is full or the thinker is closed."""
        if self.closed or self.pending >= self.limit:
            return None
        for _ in range(2):  # a broken pool is replaced, once
            pool = self._pool or self._start()
            try:
                job = pool.submit(_capped, cap, fn, *args)
            except BrokenProcessPool:
                self._retire(pool)
                continue
            self._running.add(job)
            job.add_done_callback(self._done)
            return asyncio.wrap_future(job)
        return None

    def _done(self, job: concurrent.futures.Future[Any]) -> None:
        self._running.discard(job)
        if not job.cancelled() and isinstance(job.exception(), BrokenProcessPool):
            log.error("a bot worker process died; the next search starts a new one")

    def _start(self) -> concurrent.futures.ProcessPoolExecutor:
        # spawn, not fork: a fork of the server would copy its loop, threads and sockets
        self._pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self.nice,),
        )
        self.started += 1
        return self._pool

    def _retire(self, pool: concurrent.futures.ProcessPoolExecutor) -> None:
        if self._pool is pool:
            self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def open(self) -> None:
        """Take jobs from now on (the workers start with the first)."""
        self.closed = False

    async def aclose(self) -> None:
        """Stop the workers (the app's shutdown): queued jobs are dropped, and
        a running one finishes first (at most its cap), off the loop."""
        self.closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
