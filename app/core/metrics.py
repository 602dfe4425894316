"""What the process counts for Prometheus (served only with METRICS=true, by
app/api/metrics.py, behind a bearer token).

Counters and histograms live here, in one registry per process: each replica
serves its own, and Prometheus adds them up.  They are bumped where the work
already happens, one call each.  The two on every player action (`handled`)
and every append batch (`appended`) do nothing unless `enable()` was called,
so a server without metrics pays one flag test there; the rest are bumped on
rarer events (a bot's move, a timer, a push) and count whether or not anyone
reads them.  What is a state rather than an event (rooms open, people
connected, leases held, sockets) is read from the rooms when Prometheus asks
(app/api/metrics.py), never kept up to date move by move.

No label names a room, a person or a game: only bounded sets (a refusal's
code, a door, a bot's level, a game's name), so the series stay few.
"""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter

from prometheus_client import CollectorRegistry, Counter, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

#: latencies from a tenth of a millisecond to ten seconds
SECONDS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
           1.0, 2.5, 5.0, 10.0)  # fmt: skip


def _counter(name: str, doc: str, *labels: str) -> Counter:
    return Counter(name, doc, labels, registry=REGISTRY)


def _histogram(name: str, doc: str, *labels: str, buckets: Sequence[float] = SECONDS) -> Histogram:
    return Histogram(name, doc, labels, buckets=buckets, registry=REGISTRY)


ACTIONS = _counter(
    "cardroom_actions",
    "Player messages handled by the rooms: actions and commands, applied or refused (by code)",
    "kind", "result", "code",
)  # fmt: skip
ACTION_SECONDS = _histogram(
    "cardroom_action_seconds",
    "From a player's message reaching its room to its views and reply queued",
)
APPEND_SECONDS = _histogram(
    "cardroom_append_batch_seconds",
    "Time to commit one batch of the action log's appends (group commit)",
)
APPEND_BATCH = _histogram(
    "cardroom_append_batch_size", "Writes committed together in one batch",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
)  # fmt: skip
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
    "Database writes that failed, and storage calls that found no answer in time",
)
REDIS_ERRORS = _counter(
    "cardroom_redis_errors", "Calls to Redis that failed (limits, socket caps, leases)"
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
        ACTIONS.labels(kind, "applied", "").inc()
    else:
        ACTIONS.labels(kind, "refused", refused).inc()


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
