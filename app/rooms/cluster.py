"""Rooms shared by several processes (REDIS_URL set; PostgreSQL for records).

Any process answers any request and accepts any room's socket; each open room
has one owner process at a time, which alone applies actions, runs timers and
moves bots (app/store/cluster.py holds the lease and its fencing epoch).

- **Owning.** A process takes a room's lease when it needs the room and nobody
  owns it, records the new epoch in the database (`claim_room`), and rebuilds
  the room from its records.  It renews every lease a third of the lease time;
  a renewal that fails - or a write the database refuses for an older
  epoch - means another process owns the room now: this one steps down,
  closing its sockets with 1012 so their clients reconnect.
- **Relaying.** A socket held by a process that does not own its room is
  relayed: `connect`, each client message and `disconnect` go to the owner's
  stream; the owner's frames for that socket come back on the holder's stream.
  The owner sees a `Connection` like any other, so every frame still comes out
  of the room's one delivery point, addressed to that socket's seat only.
  The owner handles a room's relayed traffic in arrival order, in a task of
  that room's (`_relay_room`, started by `_relay_later`), so the inbox never
  waits for a busy room.
- **Calls.** Joining, claiming a seat link and the lobby's room are calls to
  the owner, answered on the caller's stream.
- **Takeover.** A holder checks its relayed rooms' owners twice a second; when
  an owner is gone (its lease expired: killed, or paused past it) or changed,
  the holder takes the room if it can and closes its relayed sockets with
  1012, and their clients reconnect - to any process - with their tokens.
  Each process also adopts, every few seconds, the open rooms nobody owns that
  rendezvous hashing over the live processes gives it, so a room with nobody
  connected still plays its bots and timers, and a dead process's rooms spread
  over the living.
- **Closing.** A room that closes gives up its lease and epoch counter at once.
- **Graceful stop.** On shutdown a process releases its leases at once.
- **Redis restarts.** Streams and leases vanish: owners fail to renew and step
  down, holders find no owner and close their sockets; clients reconnect and
  rooms are rebuilt from the database, with epochs raised past the stored one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import secrets
from collections import deque
from collections.abc import Coroutine, Mapping
from time import perf_counter
from typing import Any

import orjson
from redis.exceptions import RedisError

from app.bots.thinking import Thinker
from app.core import metrics
from app.games.base import Game
from app.rooms.connection import Connection
from app.rooms.delivery import Resume
from app.rooms.errors import RoomError
from app.rooms.manager import RoomManager, SocketTarget
from app.rooms.room import Room, Seeds
from app.rooms.timers import Backoff
from app.rooms.tokens import is_code, new_token, token_hash
from app.store.cluster import Cluster, rendezvous
from app.store.records import PlayerRecord, Records

log = logging.getLogger(__name__)

CLOSE_MOVING = 1012
#: the room's server cannot be reached just now (RFC 6455's Try Again Later):
#: a socket refused so, or a relayed one whose message could not reach the
#: room's owner; the client reconnects and resumes
CLOSE_TRY_AGAIN = 1013
#: commands whose ack holds a link's secret (made by the socket's holder)
LINK_COMMANDS = frozenset({"seat_link", "move_link"})
#: seconds a call to another process may take
CALL_TIMEOUT = 5.0
#: seconds between looks for rooms nobody owns
ADOPT_EVERY = 3.0
#: the longest wait, in seconds, before an open room this process could not
#: rebuild is adopted again (the first wait is ADOPT_EVERY, then doubling)
ADOPT_RETRY_CAP = 600.0
#: seconds `shutdown` waits for the long-running jobs to end
STOP_WAIT = 3.0
#: the longest wait, in seconds, before a failed job is run again
JOB_RETRY_CAP = 1.0
#: seconds a job must run before its failure counts as a new outage
JOB_RECOVERED = 10.0


def _unavailable() -> RoomError:
    return RoomError(
        "unavailable", "the server cannot reach the room's server just now; trying again"
    )


class Relay:
    """A socket whose room another process owns: its messages go there."""

    def __init__(
        self, cluster: ClusterManager, code: str, owner: tuple[str, int], conn: Connection
    ) -> None:
        self.cluster = cluster
        self.code = code
        #: the owner process and its epoch when this socket was attached
        self.owned_by = owner
        self.owner = owner[0]
        self.conn = conn
        self.id = secrets.token_hex(8)
        self.v = 0
        self.closed = False
        #: secrets of links this socket asked for, by request id, until the ack
        self.link_secrets: dict[bytes, str] = {}

    async def handle(
        self, conn: Connection, msg_id: Any, kind: str, payload: dict[str, Any]
    ) -> None:
        if kind == "cmd" and payload.get("type") in LINK_COMMANDS:
            # the link's secret is made here; only its hash goes to the owner
            secret = new_token()
            self.link_secrets[orjson.dumps(msg_id)] = secret
            payload = {**payload, "secret_hash": token_hash(secret)}
        try:
            await self.cluster.tell(
                self.owner,
                {
                    "t": "msg",
                    "room": self.code,
                    "c": self.id,
                    "id": msg_id,
                    "k": kind,
                    "p": payload,
                    "from": self.cluster.cluster.me,
                },
            )
        except RedisError as err:
            # the owner cannot be reached (Redis away): the message is not
            # delivered, so the client is told so and the socket closes; it
            # reconnects and resumes once Redis is back, and sends again
            log.warning("room %s: relayed message not delivered (%s)", self.code, err)
            refused = _unavailable()
            frame = {"re": msg_id, "error": refused.as_dict(), "v": self.v}
            conn.push(orjson.dumps(frame).decode())
            conn.close(CLOSE_TRY_AGAIN, refused.message)

    def deliver(self, text: str) -> None:
        """A frame from the owner, for this socket: the ack of a link it asked
        for gets the secret made here put back in."""
        if self.link_secrets:
            text = self._with_secrets(text)
        self.conn.push(text)

    def _with_secrets(self, text: str) -> str:
        frame = orjson.loads(text)
        changed = False
        for msg in frame if isinstance(frame, list) else [frame]:
            if not isinstance(msg, dict) or "re" not in msg:
                continue
            secret = self.link_secrets.pop(orjson.dumps(msg["re"]), None)
            data = msg.get("data")
            if secret is not None and isinstance(data, dict) and data.get("claim") == "":
                data["claim"] = secret
                changed = True
        return orjson.dumps(frame).decode() if changed else text

    async def disconnect(self, conn: Connection) -> None:
        self.cluster.relays.pop(self.id, None)
        with contextlib.suppress(Exception):
            await self.cluster.tell(
                self.owner, {"t": "disconnect", "room": self.code, "c": self.id}
            )


class ClusterManager(RoomManager):
    def __init__(
        self,
        records: Records,
        games: Mapping[str, Game[Any]],
        cluster: Cluster,
        seeds: Seeds | None = None,
        thinker: Thinker | None = None,
    ) -> None:
        super().__init__(records, games, seeds, thinker=thinker)
        self.cluster = cluster
        #: epoch of each room this process owns
        self.epochs: dict[str, int] = {}
        #: sockets held here whose rooms other processes own, by relay id
        self.relays: dict[str, Relay] = {}
        #: connections of sockets held by other processes, in rooms owned here
        self.remote: dict[str, tuple[Room, Connection, str]] = {}
        #: relayed sockets' connects, messages and disconnects for rooms owned
        #: here, per room in the order they came, each room's handled by its
        #: own task (`_relay_room`) while it has any
        self._relayed: dict[str, deque[tuple[dict[str, Any], float]]] = {}
        self._relaying: dict[str, asyncio.Task[None]] = {}
        self._calls: dict[str, asyncio.Future[Any]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        #: set by `shutdown`: the long-running jobs end at their next turn even
        #: if a cancel is lost (see `shutdown`)
        self._stopping = False
        self._jitter = random.Random()
        #: short jobs started from callbacks (a step-down, a closed room's
        #: lease, a call to answer): kept until done, awaited at shutdown
        self._chores: set[asyncio.Task[None]] = set()
        #: open rooms this process could not rebuild: when adoption may try
        #: each again, and its backoff - a room whose game no longer replays
        #: must not cost a lease, a takeover and a traceback every few seconds
        self._unbuilt: dict[str, tuple[float, Backoff]] = {}

    # ----------------------------------------------------------------- life

    async def start(self) -> None:
        await self.cluster.beat()
        loop = asyncio.get_running_loop()
        for job in (self._read_inbox, self._keep_leases, self._watch, self._adopt):
            self._tasks.append(loop.create_task(self._forever(job)))

    async def _forever(self, job: Any) -> None:
        """Run `job` again whenever it fails (Redis away, a query failing),
        after a jittered, doubling delay capped at JOB_RETRY_CAP: the rooms
        must come back within about a lease of Redis coming back
        (docs/architecture.md), so the cap is short, and the jitter keeps
        processes from asking in step.  The first failure of an outage is
        logged with its traceback, the tries after it are not (an outage of a
        minute is one log entry per job, not a hundred); a job that then runs
        a good while counts as recovered, and starts over from the shortest
        delay."""
        loop = asyncio.get_running_loop()
        backoff = Backoff(first=0.25, cap=JOB_RETRY_CAP)
        while not self._stopping:
            started = loop.time()
            try:
                await job()
            except asyncio.CancelledError:
                raise
            except Exception:
                if self._stopping:
                    return
                if loop.time() - started > JOB_RECOVERED:
                    backoff.reset()
                if backoff.failures == 0:
                    log.exception("cluster: %s failed; trying again until it works", job.__name__)
                await asyncio.sleep(backoff.next(self._jitter))

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        """Run `job` as a chore this manager owns (see `_chores`)."""
        task = asyncio.get_running_loop().create_task(job)
        self._chores.add(task)
        task.add_done_callback(self._chore_done)

    def _chore_done(self, task: asyncio.Task[None]) -> None:
        self._chores.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("cluster: a chore failed", exc_info=task.exception())

    async def shutdown(self) -> None:
        """Hand every room over: stop it, close its sockets, release its lease.

        The long-running jobs are cancelled and awaited, for at most
        STOP_WAIT seconds: Redis's asyncio client can lose a cancel that lands
        in a blocking read (its issue #2028), and the inbox reader is in one
        nearly all the time.  `_stopping` ends such a job when its read comes
        back (within the inbox's block of a second); one still running after
        STOP_WAIT is logged and left to end with the Redis client, closed
        after this (the app's lifespan), rather than holding the shutdown."""
        self._stopping = True
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, late = await asyncio.wait(self._tasks, timeout=STOP_WAIT)
            if late:
                log.warning("cluster: %d jobs had not stopped after %.0f s", len(late), STOP_WAIT)
        for task in list(self._relaying.values()):
            task.cancel()
        await asyncio.gather(*self._relaying.values(), return_exceptions=True)
        await asyncio.gather(*self._chores, return_exceptions=True)
        for code in list(self.epochs):
            await self._step_down(code)
        for relay in list(self.relays.values()):
            relay.conn.close(CLOSE_MOVING, "server restarting")
        await super().shutdown()

    # -------------------------------------------------------------- owning

    async def _take(self, code: str) -> bool:
        """Own the room if nobody does; True if this process owns it now."""
        if code in self.epochs:
            return True
        for _ in range(2):
            epoch = await self.cluster.take(code)
            if epoch is None:
                return False
            claimed = await self.records.claim_room(code, epoch)
            if claimed is None:  # not an open room
                await self.cluster.release(code, epoch)
                return False
            if claimed[0]:
                if epoch > 1:  # someone owned it before
                    metrics.TAKEOVERS.inc()
                self.epochs[code] = epoch
                log.info("room %s: owned here, epoch %d", code, epoch)
                return True
            # Redis lost its counter (a restart): move it past the stored epoch
            await self.cluster.release(code, epoch)
            await self.cluster.raise_epoch(code, claimed[1])
        return False

    async def _load(self, code: str) -> Room | None:
        owner = await self.cluster.owner(code)
        if owner is not None and owner[0] != self.cluster.me:
            return None  # another process owns it: use it through a relay
        if owner is None and not await self.records.room_is_open(code):
            return None  # an unknown code: looked up, nothing written anywhere
        if not await self._take(code):
            return None
        try:
            room = await super()._load(code)
        except BaseException:
            # nothing serves it here: the lease goes, or it would be renewed
            # for ever with no room behind it and nobody else could adopt it
            await self._release(code)
            self._not_built(code)
            raise
        if room is None:
            await self._release(code)
            self._not_built(code)
        else:
            self._unbuilt.pop(code, None)
        return room

    def _not_built(self, code: str) -> None:
        """Adoption leaves `code` alone for a while (a request for it still
        tries at once: its answer says what is wrong)."""
        _, backoff = self._unbuilt.get(code, (0.0, Backoff(first=ADOPT_EVERY, cap=ADOPT_RETRY_CAP)))
        self._unbuilt[code] = (self.clock() + backoff.next(self._jitter), backoff)

    def _wire(self, room: Room) -> None:
        """Its writes carry this process's epoch (the fence), and a fenced
        write steps the process down."""
        room.table.epoch = self.epochs[room.code]
        room.on_moved = self._moved

    def _moved(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:  # not an instance already replaced
            self._spawn(self._step_down(room.code))

    def _closed(self, room: Room) -> None:
        """A room closed here: its lease and epoch counter go from Redis, and
        its relayed sockets from `remote` (their holders are told to close)."""
        if self.rooms.get(room.code) is not room:
            return
        super()._closed(room)
        for cid, (r, _conn, _holder) in list(self.remote.items()):
            if r is room:
                del self.remote[cid]
        epoch = self.epochs.pop(room.code, None)
        if epoch is not None:
            self._spawn(self.cluster.forget(room.code, epoch))

    async def _step_down(self, code: str) -> None:
        """This process no longer owns the room: forget it, close its sockets."""
        log.info("room %s: no longer owned here", code)
        room = self.rooms.pop(code, None)
        if room is not None:
            await room.shutdown()  # sockets close with 1012: clients reconnect
        for cid, (r, _conn, _holder) in list(self.remote.items()):
            if r is room:
                del self.remote[cid]
        await self._release(code)

    async def _release(self, code: str) -> None:
        epoch = self.epochs.pop(code, None)
        if epoch is not None:
            with contextlib.suppress(Exception):
                await self.cluster.release(code, epoch)

    async def _keep_leases(self) -> None:
        every = self.cluster.lease_ms / 3000
        while True:
            await asyncio.sleep(every)
            await self.cluster.beat()
            leases = list(self.epochs.items())
            kept = await self.cluster.renew_all(leases)
            for (code, epoch), ok in zip(leases, kept, strict=True):
                if not ok and self.epochs.get(code) == epoch:
                    log.warning("room %s: lease lost; stepping down", code)
                    await self._step_down(code)

    async def _adopt(self) -> None:
        """Own the open rooms nobody owns (an owner died with nobody connected)."""
        while True:
            await asyncio.sleep(ADOPT_EVERY)
            await self.adopt_once()

    async def adopt_once(self) -> int:
        """Take the open rooms nobody owns that fall to this process: each
        goes to the live process `rendezvous` names, so the rooms of a dead
        process spread over the others instead of all going to whichever
        looked first.  How many it took."""
        codes = await self.records.open_rooms()
        owners = await self.cluster.owners(codes)
        live = self.cluster.live
        for gone in self._unbuilt.keys() - set(codes):  # closed meanwhile
            del self._unbuilt[gone]
        now = self.clock()
        taken = 0
        for code, owner in zip(codes, owners, strict=True):
            if (
                owner is None
                and code not in self.rooms
                and rendezvous(code, live) == self.cluster.me
                and self._unbuilt.get(code, (now,))[0] <= now
            ):
                taken += await self.find(code) is not None
        return taken

    # --------------------------------------------------------- creating rooms

    async def _own_new(self, code: str) -> bool:
        return await self._take(code)

    # ------------------------------------------------- what routes ask of rooms

    async def _owner_of(self, code: str) -> tuple[str, int] | None:
        """The process that owns the room (and its epoch), taking it if nobody
        does.  `code` is normalised: the routes do it once, at the boundary."""
        if not is_code(code):
            return None
        owner = await self.cluster.owner(code)
        if owner is not None:
            return owner
        if await self.find(code) is None:
            return None
        epoch = self.epochs.get(code)
        if epoch is None:  # taken, then its lease lost meanwhile (a long pause)
            return await self.cluster.owner(code)
        return self.cluster.me, epoch

    async def _call(self, code: str, op: str, **args: Any) -> Any:
        found = await self._owner_of(code)
        if found is None:
            raise RoomError("no_room", f"there is no open room {code!r}")
        owner = found[0]
        if owner == self.cluster.me:
            return await self._answer_call(code, op, args)
        rid = secrets.token_hex(8)
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls[rid] = done
        try:
            await self.tell(
                owner,
                {"t": "call", "room": code, "op": op, "a": args, "r": rid, "from": self.cluster.me},
            )
            answer = await asyncio.wait_for(done, CALL_TIMEOUT)
        except TimeoutError:
            raise RoomError(
                "storage_error", "the room's server did not answer; try again"
            ) from None
        finally:
            self._calls.pop(rid, None)
        if "error" in answer:
            raise RoomError(answer["error"]["code"], answer["error"]["message"])
        return answer["ok"]

    async def _answer_call(self, code: str, op: str, args: dict[str, Any]) -> Any:
        room = await super().require(code)
        if op == "public":
            return room.room_public()
        if op == "release":
            return await room.release_person(str(args["guest_id"]))
        own = False
        if op == "join":
            player, token = await room.join(**args)
        elif op == "claim":
            player, token, own = await room.claim(
                args["claim"],
                guest_id=args.get("guest_id"),
                account_id=args.get("account_id"),
                token_hash=args.get("token_hash"),
            )
        else:
            raise RoomError("bad_command", f"unknown call {op!r}")
        return {"code": room.code, "player": _player_json(player), "token": token, "own": own}

    async def join(
        self,
        code: str,
        name: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
        spectator: bool = False,
    ) -> tuple[str, PlayerRecord, str]:
        # the token is made here and only its hash goes to the owner: no
        # token travels through Redis (nor does a guest cookie: guest_id is its hash)
        token = new_token()
        got = await self._call(
            code,
            "join",
            name=name,
            guest_id=guest_id,
            account_id=account_id,
            spectator=spectator,
            token_hash=token_hash(token),
        )
        return got["code"], PlayerRecord(**got["player"]), token

    async def claim(
        self,
        code: str,
        claim: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
    ) -> tuple[str, PlayerRecord, str, bool]:
        token = new_token()
        got = await self._call(
            code,
            "claim",
            claim=token_hash(claim),
            guest_id=guest_id,
            account_id=account_id,
            token_hash=token_hash(token),
        )
        return got["code"], PlayerRecord(**got["player"]), token, bool(got.get("own"))

    async def public(self, code: str) -> dict[str, Any]:
        return dict(await self._call(code, "public"))

    async def release_person(self, code: str, guest_id: str) -> int:
        return int(await self._call(code, "release", guest_id=guest_id))

    async def open_socket(
        self, code: str, token: str, conn: Connection, since: Resume | None
    ) -> SocketTarget | None:
        """A socket for room `code`: served here if this process owns the room,
        else relayed to its owner.  Redis away (neither the owner can be looked
        up nor the owner told) refuses it with `unavailable`, which the socket
        closes with 1013 (try again later): the page comes back by itself."""
        relay: Relay | None = None
        try:
            owner = await self._owner_of(code)
            if owner is None:
                raise RoomError("no_room", f"there is no open room {code!r}")
            if owner[0] == self.cluster.me:
                return await super().open_socket(code, token, conn, since)
            relay = Relay(self, code, owner, conn)
            self.relays[relay.id] = relay
            await self.tell(owner[0], self._hello(relay, token, since))
        except RedisError as err:
            if relay is not None:
                del self.relays[relay.id]  # never attached: nothing to undo there
            raise _unavailable() from err
        conn.batch = False  # the owner batches; its frames go out as they come
        return relay

    def _hello(self, relay: Relay, token: str, since: Resume | None) -> dict[str, Any]:
        """What asks the owner to attach a relayed socket."""
        return {
            "t": "connect",
            "room": relay.code,
            "c": relay.id,
            "h": token_hash(token) if token else "",
            "since": None if since is None else [since.incarnation, since.v],
            "batch": relay.conn.batch,
            "from": self.cluster.me,
        }

    # ------------------------------------------------------------ messages

    async def tell(self, proc: str, msg: dict[str, Any]) -> None:
        await self.cluster.send(proc, msg)

    async def _read_inbox(self) -> None:
        await self.cluster.start_reading()  # again after a failure: see there
        async for batch in self.cluster.inbox():
            if self._stopping:  # a cancel the Redis client lost (see `shutdown`)
                return
            for msg in batch:
                try:
                    await self._on_message(msg)
                except Exception:
                    log.exception("cluster: could not handle %s", msg.get("t"))

    async def _on_message(self, msg: dict[str, Any]) -> None:
        kind = msg["t"]
        if kind == "frame":  # for a socket held here
            relay = self.relays.get(msg["c"])
            if relay is not None:
                relay.deliver(msg["x"])
        elif kind == "close":
            relay = self.relays.get(msg["c"])
            if relay is not None:
                relay.conn.close(msg["code"], msg["reason"])
        elif kind == "answer":
            done = self._calls.get(msg["r"])
            if done is not None and not done.done():
                done.set_result(msg)
        elif kind == "call":
            self._spawn(self._serve_call(msg))
        elif kind in ("connect", "msg", "disconnect"):
            self._relay_later(msg)

    def _relay_later(self, msg: dict[str, Any]) -> None:
        """Queue a relayed socket's connect, message or disconnect behind its
        room's earlier ones.  Each socket's traffic thus reaches its room in the
        order it was sent (a move sent just before a tab closed is handled, and
        acknowledged, before that person goes away), and the inbox reader never
        waits for a room: one busy room holds up only its own relayed sockets."""
        code = msg["room"]
        queue = self._relayed.get(code)
        if queue is None:
            queue = self._relayed[code] = deque()
        queue.append((msg, perf_counter()))
        if code not in self._relaying:
            self._relaying[code] = asyncio.get_running_loop().create_task(self._relay_room(code))

    async def _relay_room(self, code: str) -> None:
        """Handle a room's queued relayed traffic, one message at a time, until
        none is left (then the task ends: an idle room costs no task)."""
        queue = self._relayed[code]
        try:
            while queue:
                msg, arrived = queue.popleft()
                try:
                    await self._relayed_one(msg)
                except Exception:
                    log.exception("cluster: could not handle a relayed %s", msg["t"])
                metrics.since(metrics.RELAY_SECONDS, arrived)
        finally:
            del self._relayed[code]
            del self._relaying[code]

    async def _relayed_one(self, msg: dict[str, Any]) -> None:
        kind = msg["t"]
        if kind == "connect":
            await self._remote_connect(msg)
        elif kind == "msg":
            found = self.remote.get(msg["c"])
            if found is not None:
                room, conn, _holder = found
                await room.handle(conn, msg["id"], msg["k"], msg["p"])
            else:  # a socket attached to an owner this process no longer is
                reason = "the room moved to another server"
                close = {"t": "close", "c": msg["c"], "code": CLOSE_MOVING, "reason": reason}
                await self.tell(msg.get("from") or "", close)
        else:
            found = self.remote.pop(msg["c"], None)
            if found is not None:
                room, conn, holder = found
                await room.disconnect(conn)
                await conn.stop()
                if msg.get("lost"):  # its frames stopped reaching the holder: start over
                    close = {"t": "close", "c": msg["c"], "code": CLOSE_MOVING,
                             "reason": "the connection to the room's server was lost"}  # fmt: skip
                    with contextlib.suppress(Exception):
                        await self.tell(holder, close)

    async def _serve_call(self, msg: dict[str, Any]) -> None:
        try:
            if msg["room"] not in self.epochs:
                raise RoomError("storage_error", "the room is moving; try again")
            answer: dict[str, Any] = {
                "ok": await self._answer_call(msg["room"], msg["op"], msg["a"])
            }
        except RoomError as err:
            answer = {"error": err.as_dict()}
        await self.tell(msg["from"], {"t": "answer", "r": msg["r"], **answer})

    async def _remote_connect(self, msg: dict[str, Any]) -> None:
        holder, cid = msg["from"], msg["c"]

        async def send_text(text: str) -> None:
            await self.tell(holder, {"t": "frame", "c": cid, "x": text})

        async def close(code: int, reason: str) -> None:
            await self.tell(holder, {"t": "close", "c": cid, "code": code, "reason": reason})

        def lost() -> None:
            """The writer gave up (a frame could not be sent to the holder, as
            when Redis restarted): the holder's socket would wait for frames
            that never come, so it is disconnected here and told to close."""
            if cid in self.remote:
                self._relay_later({"t": "disconnect", "room": msg["room"], "c": cid, "lost": True})

        conn = Connection(send_text, close, batch=bool(msg["batch"]), on_dead=lost)
        room = self.rooms.get(msg["room"]) if msg["room"] in self.epochs else None
        if room is None:
            conn.close(CLOSE_MOVING, "the room is moving to another server")
            return
        player = room.members.by_hash(msg["h"])
        if player is None:
            refused = room.members.refusal(msg["h"])
            conn.push(orjson.dumps({"re": None, "error": refused.as_dict(), "v": 0}).decode())
            conn.close(4401, refused.message[:120])
            return
        conn.player_id = player.player_id
        self.remote[cid] = (room, conn, holder)
        since = msg["since"]
        resume = None if since is None else Resume(str(since[0]), int(since[1]))
        if not await room.connect(conn, resume):
            self.remote.pop(cid, None)

    # ------------------------------------------------------------ watching

    async def _watch(self) -> None:
        """Relayed rooms whose owner is gone or changed: take them over if we
        can, and send their sockets' clients to reconnect.  Owned rooms' remote
        sockets whose holder died: disconnect them."""
        while True:
            await asyncio.sleep(0.5)
            by_room: dict[str, list[Relay]] = {}
            for relay in self.relays.values():
                by_room.setdefault(relay.code, []).append(relay)
            codes = list(by_room)
            for code, owner in zip(codes, await self.cluster.leases(codes), strict=True):
                relays = by_room[code]
                if owner is not None and owner == relays[0].owned_by:
                    continue
                if owner is None:
                    await self.find(code)  # take it over: its clients come back here or anywhere
                for relay in relays:
                    self.relays.pop(relay.id, None)
                    relay.conn.close(CLOSE_MOVING, "the room moved to another server")
            holders = {holder for _r, _c, holder in self.remote.values()}
            for holder in holders:
                if await self.cluster.alive(holder):
                    continue
                for cid, (room, _conn, h) in list(self.remote.items()):
                    if h == holder:  # after whatever that socket sent before
                        # "lost": it is told to close as well, in case it only
                        # looked dead (just after a Redis restart every process
                        # does, until its next beat) and its socket lives on
                        lost = {"t": "disconnect", "room": room.code, "c": cid, "lost": True}
                        self._relay_later(lost)


def _player_json(p: PlayerRecord) -> dict[str, Any]:
    """A person for another process: everything but the token's hash (and no
    bot level, which a person has not: a process of the release before levels
    reads this too while both run)."""
    found = {**dataclasses.asdict(p), "token_hash": ""}
    if found["bot_level"] is None:
        del found["bot_level"]
    return found
