"""A room's waits: named slots, each a loop timer (`loop.call_later`) set for a
wall-clock deadline, that then runs its callback through the room's runner
(which takes the room's lock and delivers what changed).

Deadlines, not durations: what a view shows ("ms left") and what a restored
room resumes from is the same number.  A slot holds one wait at a time; its
`key` says what the wait is for, so a change that leaves the room waiting on
the same thing keeps the timer running instead of restarting it.  A callback
that fires after its slot was replaced or dropped does nothing.

A wait is a timer handle, not a sleeping task: most waits (a bot's thinking
time, a turn timer) are dropped before they fire, and cancelling a sleeping
task raises CancelledError through its frame, which leaves a cycle (task,
frame, traceback, timer) that only the collector frees.  The server freezes
the heap every second (app/main.py), so that garbage waited for the next full
sweep: a thousand rooms grew by tens of MB a minute.  A cancelled handle is
just dropped.

A wait is never armed in the past twice.  A deadline that has already
passed fires at once - that is how a restarted room catches up - but a slot
asked to wait again for the same thing (same key) until a deadline no later
than the one it has already fired at would fire again at once, for ever (a
full core, for as long as the room lives).  Callers key their waits by what
they wait on (the game's sequence number, a deadline), so a wait that made
progress has a new key; one that did not is put off by `REARM_FLOOR` and
logged, so a caller that gets this wrong costs one wake-up a second, not a
spin.  Retries
of work that failed (storage away) wait longer each time: `Backoff`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable

from app.core import metrics
from app.rooms.clock import Clock, system_clock

log = logging.getLogger(__name__)

#: seconds a wait re-armed at or before a deadline its slot already fired at is put off
REARM_FLOOR = 1.0

Fire = Callable[["Timer"], Awaitable[None]]
Runner = Callable[[Callable[[], Awaitable[None]]], Awaitable[None]]


@dataclasses.dataclass(eq=False)
class Timer:
    slot: str
    kind: str
    key: object
    seat: int | None
    deadline: float  # wall clock, seconds
    handle: asyncio.TimerHandle | None = None  # until the deadline
    task: asyncio.Task[None] | None = None  # from the deadline until the callback ends

    def as_json(self, now: float) -> dict[str, object]:
        deadline_ms = int(self.deadline * 1000)
        return {
            "kind": self.kind,
            "seat": self.seat,
            "deadline_ms": deadline_ms,
            "ms_left": max(0, deadline_ms - int(now * 1000)),
        }


@dataclasses.dataclass
class Backoff:
    """Delays for retrying work that failed: doubling from `first` to `cap`,
    each drawn from its upper half so that rooms failing together (the
    database went away) do not retry together."""

    first: float = 0.5
    cap: float = 30.0
    failures: int = 0

    def next(self, rng: random.Random) -> float:
        # the exponent stops growing past the cap: 2.0**1024 overflows, and a
        # database away for a night fails a retry that often
        ceiling = min(self.cap, self.first * 2.0 ** min(self.failures, 64))
        self.failures += 1
        return rng.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.failures = 0


class Timers:
    def __init__(self, runner: Runner, clock: Clock = system_clock) -> None:
        self._run = runner
        self.clock = clock
        self._slots: dict[str, Timer] = {}
        #: per slot, the key and deadline it last fired at (see REARM_FLOOR)
        self._fired: dict[str, tuple[object, float]] = {}
        #: how many waits of each kind have fired (the simulator bounds them)
        self.fired: Counter[str] = Counter()

    def get(self, slot: str) -> Timer | None:
        return self._slots.get(slot)

    def start(
        self,
        slot: str,
        kind: str,
        deadline: float,
        fire: Fire,
        *,
        key: object = None,
        seat: int | None = None,
    ) -> Timer:
        """Wait in `slot` until `deadline`, unless it already waits for the same
        kind and key (then that wait goes on)."""
        old = self._slots.get(slot)
        if old is not None and old.kind == kind and old.key == key:
            return old
        self.drop(slot)
        fired = self._fired.get(slot)
        if fired is not None and fired[0] == key and deadline <= fired[1]:
            log.warning(
                "a %s wait for %r was set again for %.3f, no later than it fired at (%.3f)",
                kind, key, deadline, fired[1],
            )  # fmt: skip
            deadline = max(deadline, self.clock() + REARM_FLOOR)
        t = Timer(slot, kind, key, seat, deadline)
        self._arm(t, fire)
        self._slots[slot] = t
        return t

    def drop(self, slot: str) -> None:
        t = self._slots.pop(slot, None)
        if t is None:
            return
        if t.handle is not None:
            handle, t.handle = t.handle, None  # the handle holds the timer: no cycle left
            handle.cancel()
        if t.task is not None and t.task is not asyncio.current_task():
            t.task.cancel()

    def drop_all(self) -> None:
        for slot in list(self._slots):
            self.drop(slot)

    def slots(self, prefix: str) -> list[str]:
        return [s for s in self._slots if s.startswith(prefix)]

    def _arm(self, t: Timer, fire: Fire) -> None:
        left = max(0.0, t.deadline - self.clock())
        t.handle = asyncio.get_running_loop().call_later(left, self._due, t, fire)

    def _due(self, t: Timer, fire: Fire) -> None:
        t.handle = None
        if self._slots.get(t.slot) is not t:
            return
        if t.deadline > self.clock():  # the loop's clock ran ahead of the wall clock: never early
            self._arm(t, fire)
            return
        t.task = asyncio.get_running_loop().create_task(self._fire(t, fire))

    async def _fire(self, t: Timer, fire: Fire) -> None:
        async def due() -> None:
            if self._slots.get(t.slot) is not t:
                return  # replaced or dropped while this one was waiting for the lock
            del self._slots[t.slot]
            self._fired[t.slot] = (t.key, t.deadline)
            self.fired[t.kind] += 1
            metrics.TIMER_FIRINGS.inc()
            await fire(t)

        try:
            await self._run(due)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("a %s timer failed", t.kind)
