"""Running seeds: one (`SIM_SEED`), a range, or many in a process pool.

`python -m tests.sim.run --seeds 20000 --jobs 2` is what `make sim` runs; a
failure prints its seed, the check that broke and the trace's last lines, and
`SIM_SEED=<n> make sim` (or `pytest tests/sim -k replay`) replays it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from tests.sim.world import Sim

#: steps per seed: enough for a game, a crash or two and some long absences
STEPS = 80


def run_seed(seed: int, steps: int = STEPS) -> str | None:
    """None if every check held; else the failure and the end of the trace."""
    sim = Sim(seed, steps)
    try:
        sim.run()
    except BaseException as err:  # a failure of any kind is this seed's finding
        tail = "\n".join(sim.trace[-25:])
        return f"seed {seed} failed at step {sim.step_no}: {err!r}\n{tail}"
    return None


def run_range(first: int, count: int) -> list[str]:
    return [f for f in (run_seed(s) for s in range(first, first + count)) if f]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=2000)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    one = os.environ.get("SIM_SEED")
    if one:
        sim = Sim(int(one), STEPS)
        try:
            sim.run()
        finally:
            print("\n".join(sim.trace))
        print(f"seed {one}: every check held")
        return 0
    t0 = time.monotonic()
    chunk = 50
    starts = range(args.first, args.first + args.seeds, chunk)
    failures: list[str] = []
    done = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        sizes = [min(chunk, args.first + args.seeds - s) for s in starts]
        for size, found in zip(sizes, pool.map(run_range, starts, sizes), strict=True):
            failures.extend(found)
            for f in found:  # at once: a long run's findings are not kept for its end
                print(f.splitlines()[0], flush=True)
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
