"""Running seeds: one (`SIM_SEED`), a range, or many in a process pool.

`python -m tests.sim.run --seeds 20000 --jobs 2` is what `make sim` runs; a
failure prints its seed, the check that broke and the trace's last lines, and
`SIM_SEED=<n> make sim` (or `pytest tests/sim -k replay`) replays it.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from types import FrameType

from tests.sim.world import Sim

#: steps per seed: enough for a game, a crash or two and some long absences
STEPS = 80
#: CPU seconds one seed may take (a few hundred ms is usual, a churn run a
#: few seconds, a whole ten-hand Posso game of 5,000 moves one to two
#: minutes: 57, 82 and 108 s alone for the three the 20,000-seed run at
#: 815010c stopped at 60): past it the run is stopped and fails naming its
#: seed, whatever the loop is doing.  CPU time, not wall time: on a shared
#: machine a slow seed is not a spinning one - though a machine at a load of
#: 10 still stretches CPU time, hence the room above the heaviest
WALL_LIMIT = float(os.environ.get("SIM_WALL", "180"))


class WallLimit(KeyboardInterrupt):
    """Raised into a seed that ran past `WALL_LIMIT`: a KeyboardInterrupt, so
    that asyncio lets it out of any task and no `except Exception` keeps it."""


#: where the simulated rooms are stored: memory (default) or sqlite (DbRecords)
STORE = os.environ.get("SIM_STORE", "memory")


def replay_command(seed: int) -> str:
    store = f"SIM_STORE={STORE} " if STORE != "memory" else ""
    return f"{store}SIM_SEED={seed} make sim"


@contextmanager
def wall_limit(seed: int, seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: FrameType | None) -> None:
        raise WallLimit(f"seed {seed} ran past its limit of {seconds:.0f} CPU seconds")

    old = signal.signal(signal.SIGVTALRM, stop)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds, 1.0)  # again each second until out
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, old)


def run_seed(
    seed: int, steps: int = STEPS, wall: float = WALL_LIMIT, coverage: Counter[str] | None = None
) -> str | None:
    """None if every check held; else the failure, the command that replays
    it and the end of the trace.  `coverage` (if given) adds the run's counts."""
    sim = Sim(seed, steps, STORE)
    if coverage is not None:
        sim.coverage = coverage
    try:
        with wall_limit(seed, wall):
            sim.run()
    except BaseException as err:  # a failure of any kind is this seed's finding
        tail = "\n".join(sim.trace[-25:])
        return (
            f"seed {seed} failed at step {sim.step_no}: {err!r}\n"
            f"replay: {replay_command(seed)}\n{tail}"
        )
    return None


def first_failure(first: int, count: int) -> int:
    """Seeds one after another until one fails (mutation testing)."""
    for seed in range(first, first + count):
        found = run_seed(seed)
        if found:
            print(found)
            return 1
    print(f"{count} seeds from {first}: every check held")
    return 0


def run_range(first: int, count: int) -> list[str]:
    return [f for f in (run_seed(s) for s in range(first, first + count)) if f]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=2000)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--first-failure", action="store_true", help="one at a time, stop at one")
    ap.add_argument("--expect-app", help="fail (2) unless `app` is imported from here")
    args = ap.parse_args()
    if args.expect_app:
        import app

        if os.path.dirname(os.path.abspath(app.__file__)) != os.path.abspath(args.expect_app):
            print(f"app is {app.__file__}, not from {args.expect_app}")
            return 2
    if args.first_failure:
        return first_failure(args.first, args.seeds)
    one = os.environ.get("SIM_SEED")
    if one:
        sim = Sim(int(one), STEPS, STORE)
        try:
            with wall_limit(int(one), WALL_LIMIT):
                sim.run()
        finally:
            print("\n".join(sim.trace))
        print(f"seed {one}: every check held")
        return 0
    t0 = time.monotonic()
    chunk = max(1, min(50, args.seeds // (2 * args.jobs)))
    starts = range(args.first, args.first + args.seeds, chunk)
    failures: list[str] = []
    done = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        sizes = [min(chunk, args.first + args.seeds - s) for s in starts]
        for size, found in zip(sizes, pool.map(run_range, starts, sizes), strict=True):
            failures.extend(found)
            for f in found:  # at once: a long run's findings are not kept for its end
                print("\n".join(f.splitlines()[:2]), flush=True)
            done += size
            if done % 1000 < chunk:  # a long run says how far it is
                took = time.monotonic() - t0
                print(f"  {done} seeds, {len(failures)} failed, {took:.0f} s", flush=True)
    took = time.monotonic() - t0
    for f in failures[:3]:
        print(f, "\n")
    print(f"{args.seeds} seeds from {args.first}: {len(failures)} failed, in {took:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
