"""What the per-action metrics cost (app/core/metrics.py), in the same run:
nanoseconds per call of the hooks on the hot path, with metrics off and on,
and what prometheus_client's own objects would cost in their place.

    .venv/bin/python bench/metrics.py

Divide by the server's CPU per action (bench/load.py's `us/act`, about 150 us
at 20 rooms at saturation on a shared machine) for the share of an action.
Under callgrind (bench/load.py --callgrind, run once as is and once with
METRICS=true METRICS_TOKEN=x in the environment, which the server inherits)
the difference is smaller than two runs' spread, since the batches' sizes
follow the load: this script times the hooks alone.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path
from time import perf_counter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prometheus_client import CollectorRegistry, Counter, Histogram

from app.core import metrics

CALLS = 200_000


def per_call(fn: object) -> float:
    """Nanoseconds per call, the best of five runs."""
    return min(timeit.repeat(fn, number=CALLS, repeat=5)) / CALLS * 1e9  # type: ignore[arg-type]


def main() -> None:
    registry = CollectorRegistry()
    seconds = Histogram("h", "h", buckets=metrics.SECONDS, registry=registry)
    actions = Counter("c", "c", ["kind", "result", "code"], registry=registry)

    def library() -> None:
        seconds.observe(perf_counter() - perf_counter())
        actions.labels("action", "applied", "").inc()

    off = per_call(lambda: metrics.handled("action", None, perf_counter()))
    metrics.enable()
    on = per_call(lambda: metrics.handled("action", None, perf_counter()))
    batch = per_call(lambda: metrics.appended(4, perf_counter(), False))
    print(f"handled (each player message): off {off:.0f} ns, on {on:.0f} ns")
    print(f"appended (each batch of writes), on: {batch:.0f} ns")
    print(f"prometheus_client's Histogram and labelled Counter instead: {per_call(library):.0f} ns")


if __name__ == "__main__":
    main()
