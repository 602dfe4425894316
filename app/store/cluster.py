"""What several app processes share through Redis: who owns each room (a lease
with a fencing epoch), which processes are alive, and a message stream per
process.  Nothing here is durable: every key can be lost (a Redis restart) and
is rebuilt from PostgreSQL and from the processes themselves.

- **Leases.** `cr:owner:{code}` holds "<process> <epoch>" and expires after
  `lease_ms` unless the owner renews it.  Taking a free room increments
  `cr:epoch:{code}`, so every owner a room ever had has a larger epoch than the
  one before; the database refuses every write of a room carrying an older
  epoch than the room's stored one (app/db/writes.py, `fenced`), so an owner
  paused past its lease can never write after a takeover.  Taking, renewing
  and releasing are Lua scripts: each checks and changes the key in one step.
- **Processes.** `cr:proc:{id}` exists while the process renews it, and the
  sorted set `cr:procs` lists the live ones (each scored by when its beat
  runs out): rooms nobody owns are adopted by the live process that
  `rendezvous` names, so they spread evenly.  A closed room's lease and epoch
  counter are deleted (`forget`).
- **Streams.** `cr:in:{id}` is what other processes send this one (client
  messages for the rooms it owns, frames for the sockets it holds, calls and
  answers).  Streams, not pub/sub: a reader that blinks misses nothing while
  Redis stays up; after a Redis restart the processes resync (app/rooms/cluster.py).
  A stream expires `STREAM_TTL_LEASES` leases after its process's last beat.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

import orjson
from redis.asyncio import BlockingConnectionPool, Redis
from redis.exceptions import ConnectionError as RedisConnectionError

_TAKE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. epoch, 'PX', ARGV[2])
return epoch
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
#: a closed room: its lease and its epoch counter go (the database keeps the
#: closed room's last epoch; a new room with the same code starts a new row)
_FORGET = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('DEL', KEYS[2])
  return 1
end
return 0
"""
#: a process's heartbeat: its own key, its inbox's expiry pushed back, and the
#: set of live processes (scored by when each beat runs out, on Redis's clock,
#: so the processes' clocks need not agree); the live processes come back
_BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
return redis.call('ZRANGEBYSCORE', KEYS[3], now, '+inf')
"""
_RAISE = """
local e = tonumber(redis.call('GET', KEYS[1]) or '0')
if e < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""
#: messages kept per stream before the oldest are trimmed (a process that fell
#: this far behind resyncs anyway)
STREAM_MAX = 50_000
#: a process's inbox outlives its last heartbeat by this many leases, then
#: expires: a dead process's stream does not stay in Redis for ever
STREAM_TTL_LEASES = 20
#: the sorted set of live processes (see `_BEAT`)
LIVE_KEY = "cr:procs"


#: the end of this release's process ids: it says the process reads an inbox
#: entry holding several messages (`send`); an id without it is a process of
#: an earlier release, sent one message an entry, as that release reads
BATCHES = ".b"
#: leases (or socket counts, app/store/sockets.py) renewed in one round trip:
#: between two, the loop serves everything else
RENEW_CHUNK = 100


def new_process_id() -> str:
    return secrets.token_hex(6) + BATCHES


def connect(url: str, *, timeout: float | None = None) -> Redis:
    """A client on a bounded pool whose callers wait for a connection rather
    than fail: under load thousands of frames are relayed at once.  `timeout`:
    the seconds a command, or the wait for a connection, may take before it
    fails (else redis-py's default, and 10 s for a connection), for callers
    that would rather go on without Redis than wait for it."""
    if timeout is None:
        pool = BlockingConnectionPool.from_url(url, max_connections=64, timeout=10)
    else:
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=64,
            timeout=timeout,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
        )
    return Redis(connection_pool=pool)


class Cluster:
    def __init__(self, url: str, *, lease_ms: int = 3000, process_id: str | None = None) -> None:
        """`lease_ms`: how long a room's lease lasts unless renewed."""
        self.redis: Redis = connect(url)
        self.me = process_id or new_process_id()
        self.lease_ms = lease_ms
        self._take = self.redis.register_script(_TAKE)
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self._raise = self.redis.register_script(_RAISE)
        self._forget = self.redis.register_script(_FORGET)
        self._beat = self.redis.register_script(_BEAT)
        self._last_id = "$"
        #: the live processes as of the last heartbeat (this one among them)
        self.live: list[str] = [self.me]
        #: messages waiting for their round trip, by the process they go to
        self._outboxes: dict[str, _Outbox] = {}

    @property
    def stream_ttl_ms(self) -> int:
        return self.lease_ms * STREAM_TTL_LEASES

    async def close(self) -> None:
        flushers = [b.flusher for b in self._outboxes.values() if b.flusher is not None]
        for task in flushers:
            task.cancel()
        await asyncio.gather(*flushers, return_exceptions=True)
        await self.redis.aclose()

    # ------------------------------------------------------------------ leases

    async def take(self, code: str) -> int | None:
        """Become the room's owner if nobody is; the new epoch, or None."""
        epoch = await self._take(
            keys=[f"cr:owner:{code}", f"cr:epoch:{code}"], args=[self.me, self.lease_ms]
        )
        return int(epoch) or None

    async def renew(self, code: str, epoch: int) -> bool:
        """Keep the lease; False if it is no longer ours (then step down)."""
        return bool(
            await self._renew(keys=[f"cr:owner:{code}"], args=[f"{self.me} {epoch}", self.lease_ms])
        )

    async def renew_all(self, leases: list[tuple[str, int]]) -> list[bool]:
        """Renew many leases, RENEW_CHUNK to a round trip (a process may own
        thousands, and building one pipeline of a thousand calls held the
        event loop for tens of milliseconds every renewal: every move that
        came meanwhile waited, and the paced p99 showed it)."""
        kept: list[bool] = []
        for at in range(0, len(leases), RENEW_CHUNK):
            async with self.redis.pipeline(transaction=False) as pipe:
                for code, epoch in leases[at : at + RENEW_CHUNK]:
                    await self._renew(
                        keys=[f"cr:owner:{code}"],
                        args=[f"{self.me} {epoch}", self.lease_ms],
                        client=pipe,
                    )
                kept.extend(bool(x) for x in await pipe.execute())
        return kept

    async def release(self, code: str, epoch: int) -> None:
        await self._release(keys=[f"cr:owner:{code}"], args=[f"{self.me} {epoch}"])

    async def forget(self, code: str, epoch: int) -> None:
        """The room closed: drop its lease and its epoch counter (if still ours)."""
        await self._forget(
            keys=[f"cr:owner:{code}", f"cr:epoch:{code}"], args=[f"{self.me} {epoch}"]
        )

    async def raise_epoch(self, code: str, at_least: int) -> None:
        """The next owner's epoch is larger than `at_least` (after Redis lost its
        counters, the database still knows the last epoch)."""
        await self._raise(keys=[f"cr:epoch:{code}"], args=[at_least])

    async def owners(self, codes: list[str]) -> list[str | None]:
        """The owning process of each room, in one round trip."""
        if not codes:
            return []
        raw: Any = await self.redis.mget([f"cr:owner:{c}" for c in codes])
        return [None if r is None else r.decode().split()[0] for r in raw]

    async def owner(self, code: str) -> tuple[str, int] | None:
        return _lease(await self.redis.get(f"cr:owner:{code}"))

    async def leases(self, codes: list[str]) -> list[tuple[str, int] | None]:
        """The owner and epoch of each room, in one round trip (a process
        watching a thousand relayed rooms asks twice a second)."""
        if not codes:
            return []
        raw: Any = await self.redis.mget([f"cr:owner:{c}" for c in codes])
        return [_lease(r) for r in raw]

    # --------------------------------------------------------------- processes

    async def beat(self) -> list[str]:
        """Say this process is alive; the live processes (kept in `live`)."""
        raw: Any = await self._beat(
            keys=[f"cr:proc:{self.me}", f"cr:in:{self.me}", LIVE_KEY],
            args=[self.me, self.lease_ms, self.stream_ttl_ms],
        )
        live = sorted(p.decode() if isinstance(p, bytes) else str(p) for p in raw)
        self.live = live if self.me in live else sorted([*live, self.me])
        return self.live

    async def alive(self, proc: str) -> bool:
        return bool(await self.redis.exists(f"cr:proc:{proc}"))

    # ----------------------------------------------------------------- streams

    async def send(self, proc: str, msg: dict[str, Any]) -> None:
        """Add `msg` to `proc`'s inbox; returns once Redis has it (or raises
        what Redis raised).

        Everything sent to one process in one turn of the event loop goes in
        one round trip, as one stream entry (`_flush`): a change a room makes
        sends a frame to each socket another process holds, and a busy
        process makes many changes a turn, so the round trip, the client's
        work per command and the reader's per entry are paid per turn, not
        per frame.  A process of an earlier release (its id lacks `BATCHES`)
        reads one message an entry: it is sent its turn's messages as that
        many entries, still in one round trip.  A new inbox gets an expiry
        (its owner pushes it back while alive), so messages sent to a dead
        process do not keep a stream of theirs for ever."""
        loop = asyncio.get_running_loop()
        box = self._outboxes.get(proc)
        if box is None:
            box = self._outboxes[proc] = _Outbox()
        done: asyncio.Future[None] = loop.create_future()
        box.items.append((orjson.dumps(msg), done))
        if box.flusher is None:
            # runs at the loop's next turn, after this turn's other senders
            box.flusher = loop.create_task(self._flush(proc, box))
        await done

    async def _flush(self, proc: str, box: _Outbox) -> None:
        """Send `proc`'s queued messages, a round trip at a time, in the order
        they were queued, until none is left; then the task ends (nobody
        sending, no task).  A failed round trip fails the senders waiting on
        it; the next batch tries again (the callers decide what a lost
        message costs: app/rooms/cluster.py)."""
        key = f"cr:in:{proc}"
        items: list[tuple[bytes, asyncio.Future[None]]] = []
        try:
            while box.items:
                items, box.items = box.items, []
                try:
                    await self._round_trip(key, items, batched=proc.endswith(BATCHES))
                except Exception as err:  # every sender hears of it, none waits for ever
                    _settle(items, err)
                else:
                    _settle(items, None)
                items = []
        except asyncio.CancelledError:  # closing: nothing more will be sent
            _settle([*items, *box.items], RedisConnectionError("the cluster link is closing"))
            box.items.clear()
            raise
        finally:
            box.flusher = None
            if not box.items and self._outboxes.get(proc) is box:
                del self._outboxes[proc]

    async def _round_trip(
        self, key: str, items: list[tuple[bytes, asyncio.Future[None]]], *, batched: bool
    ) -> None:
        # `async with` resets the pipeline however it ends (an outage cut
        # short leaves no unclosed client behind)
        async with self.redis.pipeline(transaction=False) as pipe:
            if batched and len(items) > 1:
                many = b"[" + b",".join(data for data, _ in items) + b"]"
                pipe.xadd(key, {b"b": many}, maxlen=STREAM_MAX, approximate=True)
            else:
                for data, _ in items:
                    pipe.xadd(key, {b"m": data}, maxlen=STREAM_MAX, approximate=True)
            pipe.pexpire(key, self.stream_ttl_ms, nx=True)
            await pipe.execute()

    async def start_reading(self) -> None:
        """Where to read from: on first start, whatever arrives from now on;
        after a lost connection, where reading stopped - or from the start of
        the stream if Redis lost it meanwhile (a restart: a new stream whose
        ids begin again below ours)."""
        key = f"cr:in:{self.me}"
        info: Any = await self.redis.xinfo_stream(key) if await self.redis.exists(key) else None
        if info is None:
            self._last_id = "0-0"
            return
        last = info["last-generated-id"]
        last = last.decode() if isinstance(last, bytes) else str(last)
        if self._last_id in ("$", "0-0") or _stream_id(last) < _stream_id(self._last_id):
            self._last_id = last if self._last_id == "$" else "0-0"

    async def inbox(self, block_ms: int = 1000) -> AsyncIterator[list[dict[str, Any]]]:
        """Batches of messages sent to this process, in order."""
        key = f"cr:in:{self.me}"
        while True:
            got: Any = await self.redis.xread({key: self._last_id}, block=block_ms, count=500)
            if not got:
                yield []
                continue
            batch: list[dict[str, Any]] = []
            for _stream, entries in got:
                for entry_id, fields in entries:
                    self._last_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                    one = fields.get(b"m")
                    if one is not None:  # a message (alone in its turn, or an older sender)
                        batch.append(orjson.loads(one))
                    else:  # a turn's messages, in order
                        batch.extend(orjson.loads(fields[b"b"]))
            yield batch
            await asyncio.sleep(0)


class _Outbox:
    """What waits to go to one process: each message encoded, with the future
    its sender awaits; and the task sending them, while there is one."""

    __slots__ = ("flusher", "items")

    def __init__(self) -> None:
        self.items: list[tuple[bytes, asyncio.Future[None]]] = []
        self.flusher: asyncio.Task[None] | None = None


def _lease(raw: Any) -> tuple[str, int] | None:
    """A lease's value, "<process> <epoch>", read."""
    if raw is None:
        return None
    proc, epoch = (raw.decode() if isinstance(raw, bytes) else str(raw)).split()
    return proc, int(epoch)


def _settle(items: list[tuple[bytes, asyncio.Future[None]]], err: BaseException | None) -> None:
    for _, done in items:
        if done.done():  # its sender stopped waiting
            continue
        if err is None:
            done.set_result(None)
        else:
            done.set_exception(err)


def rendezvous(code: str, processes: list[str]) -> str:
    """The process that adopts room `code` among `processes` (rendezvous
    hashing): every process computes the same answer from the same live set,
    rooms spread evenly, and when a process joins or dies only the rooms it
    wins or held change hands."""
    return max(processes, key=lambda p: _weight(p, code))


def _weight(process: str, code: str) -> bytes:
    return hashlib.blake2b(f"{process} {code}".encode(), digest_size=8).digest()


def _stream_id(raw: str) -> tuple[int, int]:
    ms, _, n = raw.partition("-")
    return int(ms), int(n or 0)
