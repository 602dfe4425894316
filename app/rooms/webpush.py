"""Turn nudges over Web Push, off the rooms' path.

A room hands its nudges (app/rooms/nudges.py) to `Nudges.send`, which only
puts them on a bounded queue: a room never waits on a push service, and when
the queue is full the nudge is dropped (and counted), never the move.

Workers owned by the app's lifespan take nudges from the queue, wait
`after` seconds (a refresh or a dropped train tunnel comes back within them;
at send time `still_due` asks the room again), then send one encrypted
message to each of the person's subscriptions:

- the body is encrypted for that browser (RFC 8291, aes128gcm) by pywebpush's
  `WebPusher.encode`, and signed with the server's VAPID key (RFC 8292,
  py-vapid); the POST goes out on httpx, with its own deadline;
- 201/200/202: delivered; 404/410: the subscription is gone and is dropped;
  429, 5xx or no answer: tried again after a doubling, jittered delay (at
  most `tries` times); any other refusal is logged and not tried again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar
from urllib.parse import urlsplit

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02
from pywebpush import WebPusher

from app.core import metrics
from app.rooms.nudges import Nudge, payload

log = logging.getLogger(__name__)

T = TypeVar("T")

#: nudges waiting to be sent at most; past that new ones are dropped
QUEUE_MAX = 1000
#: sends at once (each waits on one push service's answer)
WORKERS = 4
#: seconds a push service holds a message for a phone that is offline: a turn
#: older than this is no news worth waking someone for
TTL_SECONDS = 600
#: seconds one POST may take
SEND_TIMEOUT = 10.0
#: delays between tries of one message: the first, doubling up to the cap
RETRY_FIRST = 0.5
RETRY_CAP = 8.0


class Subscription(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def endpoint(self) -> str: ...
    @property
    def p256dh(self) -> str: ...
    @property
    def auth(self) -> str: ...


class Subscriptions(Protocol):
    """Where subscriptions live (app/db/push.py's PushStore)."""

    async def of(self, guest_id: str | None, account_id: int | None) -> Sequence[Subscription]: ...

    async def drop(self, subscription_id: int) -> None: ...


class Nudges:
    def __init__(
        self,
        subscriptions: Subscriptions,
        private_pem: str,
        *,
        contact: str,
        after: float,
        tries: int = 4,
        rng: random.Random | None = None,
    ) -> None:
        """`contact`: the VAPID `sub` (a mailto: or https: address push
        services can reach the operator at); `after`: seconds a nudge waits
        before it is sent."""
        self.subscriptions = subscriptions
        key = serialization.load_pem_private_key(private_pem.encode(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        self._vapid = Vapid02(key)
        self.contact = contact
        self.after = after
        self.tries = tries
        self._rng = rng or random.Random()
        self._queue: asyncio.Queue[tuple[float, Nudge]] = asyncio.Queue(QUEUE_MAX)
        self._workers: list[asyncio.Task[None]] = []
        self._http: httpx.AsyncClient | None = None
        #: what happened to the nudges so far (tests and logs read it)
        self.counts = {"queued": 0, "dropped": 0, "sent": 0, "failed": 0, "gone": 0, "stale": 0}

    # ------------------------------------------------------------ the rooms' side

    def send(self, nudge: Nudge) -> None:
        """Queue a nudge; never waits."""
        try:
            self._queue.put_nowait((time.monotonic() + self.after, nudge))
            self.counts["queued"] += 1
        except asyncio.QueueFull:
            self.counts["dropped"] += 1
            log.warning("push queue full: a nudge for room %s dropped", nudge.room)

    # ----------------------------------------------------------- the lifespan's

    async def start(self) -> None:
        self._http = httpx.AsyncClient(timeout=SEND_TIMEOUT)
        self._workers = [asyncio.create_task(self._work()) for _ in range(WORKERS)]

    async def aclose(self) -> None:
        """Stop the workers; nudges still queued are dropped (a restarting
        server's rooms nudge again when they are rebuilt)."""
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def _work(self) -> None:
        while True:
            due, nudge = await self._queue.get()
            try:
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self.deliver(nudge)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("push: a nudge for room %s failed", nudge.room)
            finally:
                self._queue.task_done()

    async def deliver(self, nudge: Nudge) -> None:
        """Send one nudge to each of its person's subscriptions, now."""
        if not nudge.still_due():
            self.counts["stale"] += 1
            return
        subs = await self._with_retries(
            lambda: self.subscriptions.of(nudge.guest_id, nudge.account_id), "read"
        )
        if subs:
            body = payload(nudge)
            await asyncio.gather(*(self._push(s, body, nudge.room) for s in subs))

    async def _with_retries(self, call: Callable[[], Awaitable[T]], what: str) -> T | None:
        delay = RETRY_FIRST
        for attempt in range(self.tries):
            try:
                return await call()
            except Exception as err:
                if attempt == self.tries - 1:
                    log.error("push: could not %s subscriptions (%r); giving up", what, err)
                    return None
                await asyncio.sleep(self._rng.uniform(delay / 2, delay))
                delay = min(RETRY_CAP, delay * 2)
        return None

    async def _push(self, sub: Subscription, body: bytes, room: str) -> None:
        assert self._http is not None, "Nudges.start was not called"
        delay = RETRY_FIRST
        for attempt in range(self.tries):
            status: int | str
            try:
                response = await self._http.post(
                    sub.endpoint, content=self._encrypt(sub, body), headers=self._headers(sub, room)
                )
                status = response.status_code
            except httpx.HTTPError as err:
                status = repr(err)
            if status in (200, 201, 202):
                self.counts["sent"] += 1
                metrics.PUSH.labels("sent").inc()
                return
            if status in (404, 410):
                self.counts["gone"] += 1
                metrics.PUSH.labels("gone").inc()
                log.info("push: subscription %d is gone (%s); dropped", sub.id, status)
                await self._with_retries(lambda: self.subscriptions.drop(sub.id), "drop")
                return
            retry = isinstance(status, str) or status == 429 or status >= 500
            if not retry or attempt == self.tries - 1:
                self.counts["failed"] += 1
                metrics.PUSH.labels("failed").inc()
                log.warning("push: subscription %d refused the nudge (%s)", sub.id, status)
                return
            await asyncio.sleep(self._rng.uniform(delay / 2, delay))
            delay = min(RETRY_CAP, delay * 2)

    def _encrypt(self, sub: Subscription, body: bytes) -> bytes:
        info = {"endpoint": sub.endpoint, "keys": {"p256dh": sub.p256dh, "auth": sub.auth}}
        encrypted: bytes = WebPusher(info).encode(body, "aes128gcm")["body"]
        return encrypted

    def _headers(self, sub: Subscription, topic: str) -> dict[str, str]:
        url = urlsplit(sub.endpoint)
        claims = {
            "sub": self.contact,
            "aud": f"{url.scheme}://{url.netloc}",
            "exp": int(time.time()) + 12 * 3600,
        }
        signed: dict[str, str] = self._vapid.sign(claims)
        with contextlib.suppress(KeyError):
            del signed["Crypto-Key"]  # the draft's header; RFC 8292 puts k= in Authorization
        return {
            **signed,
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "TTL": str(TTL_SECONDS),
            "Urgency": "high",
            # a newer nudge for the same room replaces one the service still holds
            "Topic": f"turn-{topic}"[:32],
        }
