"""What the process counts for Prometheus (served only with METRICS=true, by
app/api/metrics.py, behind a bearer token).

Counters and histograms live here, in one registry per process: each replica
serves its own, and Prometheus adds them up.  They are bumped where the work
already happens, one call each.  The two on every player action (`handled`)
and every append batch (`appended`) do nothing unless `enable()` was called,
so a server without metrics pays one flag test there, and with metrics they
bump plain numbers that only a scrape turns into Prometheus's form
(`LoopHistogram`); the rest are prometheus_client's own, bumped on rarer
events (a bot's move, a timer, a push) and count whether or not anyone
reads them.  What is a state rather than an event (rooms open, people
connected, leases held, sockets) is read from the rooms when Prometheus asks
(app/api/metrics.py), never kept up to date move by move.

No label names a room, a person or a game: only bounded sets (a refusal's
code, a door, a bot's level, a game's name), so the series stay few.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter as Counter_
from collections.abc import Iterator, Sequence
from time import perf_counter

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

REGISTRY = CollectorRegistry(auto_describe=True)

#: latencies from a tenth of a millisecond to ten seconds
SECONDS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
           1.0, 2.5, 5.0, 10.0)  # fmt: skip


def _counter(name: str, doc: str, *labels: str) -> Counter:
    return Counter(name, doc, labels, registry=REGISTRY)


def _histogram(name: str, doc: str, *labels: str, buckets: Sequence[float] = SECONDS) -> Histogram:
    return Histogram(name, doc, labels, buckets=buckets, registry=REGISTRY)


class LoopHistogram:
    """A histogram for the event loop's hot path: a bucket's slot bumped and a
    sum added to, with no lock (only the loop's thread touches it), turned into
    Prometheus's cumulative buckets when a scrape asks (`LoopFigures`).
    prometheus_client's own takes a lock per bucket and per sum, which cost
    a few per cent of an action's instructions (bench/load.py --callgrind)."""

    def __init__(self, name: str, doc: str, buckets: Sequence[float] = SECONDS) -> None:
        self.name, self.doc = name, doc
        self.bounds = list(buckets)
        self.counts = [0] * (len(self.bounds) + 1)  # the last: over every bound
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    def family(self) -> HistogramMetricFamily:
        running, buckets = 0, []
        bounds = [*map(floatToGoString, self.bounds), "+Inf"]  # as the library writes them
        for bound, n in zip(bounds, self.counts, strict=True):
            running += n
            buckets.append((bound, running))
        return HistogramMetricFamily(self.name, self.doc, buckets=buckets, sum_value=self.sum)


#: player messages by (kind, result, code): a dict bumped on the loop
ACTIONS: Counter_[tuple[str, str, str]] = Counter_()
ACTION_SECONDS = LoopHistogram(
    "cardroom_action_seconds",
    "From a player's message reaching its room to its views and reply queued",
)
APPEND_SECONDS = LoopHistogram(
    "cardroom_append_batch_seconds",
    "Time to commit one batch of the action log's appends (group commit)",
)
APPEND_BATCH = LoopHistogram(
    "cardroom_append_batch_size", "Writes committed together in one batch",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
)  # fmt: skip


class LoopFigures(Collector):
    """The loop-only figures above, as Prometheus families at scrape time."""

    def collect(self) -> Iterator[Metric]:
        actions = CounterMetricFamily(
            "cardroom_actions",
            "Player messages handled by the rooms: actions and commands, applied or refused "
            "(by code)",
            labels=["kind", "result", "code"],
        )
        for labels, n in sorted(ACTIONS.items()):
            actions.add_metric(list(labels), n)
        yield actions
        for histogram in (ACTION_SECONDS, APPEND_SECONDS, APPEND_BATCH):
            yield histogram.family()


REGISTRY.register(LoopFigures())
BOT_SECONDS = _histogram(
    "cardroom_bot_think_seconds",
    "A bot's time to choose its move, by level (strong bots: in a worker, queue included)",
    "level",
)
TIMER_FIRINGS = _counter(
    "cardroom_timer_firings", "Room timers that fired (turns, windows, bots, grace)"
)
REBUILDS = _counter(
    "cardroom_rebuilds", "Rooms rebuilt from the records (after a restart or a takeover)"
)
REBUILD_SECONDS = _histogram(
    "cardroom_rebuild_seconds", "Time to rebuild one room from the records"
)
TAKEOVERS = _counter(
    "cardroom_takeovers", "Rooms this process came to own after another process had owned them"
)
RELAY_SECONDS = _histogram(
    "cardroom_relay_seconds",
    "A relayed socket message at its room's owner: from arriving to handled",
)
RATE_LIMITED = _counter(
    "cardroom_rate_limited", "Requests refused by a per-address limit, by door", "door"
)
DATABASE_ERRORS = _counter(
    "cardroom_database_errors",
    "Database writes that failed, storage calls that found no answer in time, and "
    "readiness checks that found the database away",
)
REDIS_ERRORS = _counter(
    "cardroom_redis_errors",
    "Calls to Redis that failed (rate limits, socket caps, readiness checks)",
)
PUSH = _counter("cardroom_push", "Web Push messages, by outcome (sent, gone, failed)", "outcome")

for _outcome in ("sent", "gone", "failed"):  # served at 0 before the first
    PUSH.labels(_outcome)

_on = False


def enable() -> None:
    """Count the per-action figures too (METRICS=true; app/main.py)."""
    global _on
    _on = True


def handled(kind: str, refused: str | None, started: float) -> None:
    """One player message handled by its room (`refused`: the refusal's code)."""
    if not _on:
        return
    ACTION_SECONDS.observe(perf_counter() - started)
    if refused is None:
        ACTIONS[kind, "applied", ""] += 1
    else:
        ACTIONS[kind, "refused", refused] += 1


def appended(size: int, started: float, failed: bool) -> None:
    """One batch of writes committed (or failed) together."""
    if failed:
        DATABASE_ERRORS.inc()
    if not _on:
        return
    APPEND_SECONDS.observe(perf_counter() - started)
    APPEND_BATCH.observe(size)


def since(histogram: Histogram, started: float) -> None:
    """Observe the seconds since `started` (a `perf_counter()` reading)."""
    histogram.observe(perf_counter() - started)
