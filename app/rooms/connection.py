"""One socket's outbound side: a queue, and a writer task that drains it.

The room never awaits a socket.  It hands already-encoded frames to the
connection, which queues them and wakes its writer; the writer sends them
in order through the send function it was given (in production the
WebSocket's documented `send`, app/api/ws.py).
A peer that stops reading therefore fills only its own queue, and past a
limit the connection is dropped (the client reconnects with `since` and
catches up): one slow or dead socket never holds up a room.

While the room works on a socket's own message it holds that socket
(`hold`/`release`): the change's events and view and the message's ack then
leave together - as one frame on a batching socket (docs/protocol.md).  A
batching socket's writer always sends everything queued as one frame, so a
change's events and view, pushed together, cost one send.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

log = logging.getLogger(__name__)

SendText = Callable[[str], Awaitable[None]]
Close = Callable[[int, str], Awaitable[None]]

#: frames waiting for one socket before it counts as too slow
MAX_QUEUE = 512


class Connection:
    """An authenticated socket in a room.  `player_id` says whose it is; `on_dead`
    runs once when the connection gives up (slow peer, failed send) or has sent
    its close, so the socket's reader can stop too.  Made inside a running
    event loop: the writer task starts with it."""

    def __init__(
        self,
        send_text: SendText,
        close: Close,
        *,
        max_queue: int = MAX_QUEUE,
        on_dead: Callable[[], None] | None = None,
        batch: bool = False,
    ) -> None:
        self.player_id = ""
        self._send_text = send_text
        self._close = close
        self._max_queue = max_queue
        self._on_dead = on_dead
        self._queue: deque[str] = deque()
        self._close_with: tuple[int, str] | None = None
        self._held = False
        #: what the writer waits on when it has nothing to send (a bare future:
        #: an `asyncio.Event` costs a coroutine and a list of waiters per wait)
        self._wake: asyncio.Future[None] | None = None
        self.dead = False
        self.closing = False
        #: send everything queued at once as one JSON array frame, and views
        #: without an unchanged room part (see docs/protocol.md)
        self.batch = batch
        #: the room part this socket's last view carried (set by Delivery._view)
        self.room_seen: object | None = None
        self._writer = asyncio.get_running_loop().create_task(self._write())

    def push(self, frame: str) -> None:
        """Queue one encoded frame; never blocks."""
        self.push_all((frame,))

    def push_all(self, frames: Sequence[str]) -> None:
        """Queue encoded frames, in order; never blocks."""
        if self.dead or self.closing or not frames:
            return
        if len(self._queue) + len(frames) > self._max_queue:
            log.info("dropping a socket that fell %d frames behind", len(self._queue))
            self._die()
            return
        self._queue.extend(frames)
        if not self._held:
            self._kick()

    def close(self, code: int, reason: str) -> None:
        """Send what is queued, then close with `code`; later pushes are dropped."""
        if self.dead or self.closing:
            return
        self.closing = True
        self._close_with = (code, reason)
        self._kick()

    def hold(self) -> None:
        """Keep what is pushed from now on until `release` (one message's replies)."""
        self._held = True

    def release(self) -> None:
        """Let the writer send what was held back."""
        self._held = False
        if self._queue or self.closing:
            self._kick()

    def _kick(self) -> None:
        """Wake the writer if it waits (if it is sending, it looks at the
        queue again before it waits)."""
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def stop(self) -> None:
        """Forget the socket (it is gone, or its handler is leaving)."""
        self.dead = True
        self._queue.clear()
        self._writer.cancel()

    # ----------------------------------------------------------------- sending

    async def _write(self) -> None:
        queue = self._queue
        loop = asyncio.get_running_loop()
        try:
            while True:
                while queue and not self._held:
                    if self.batch:
                        texts = list(queue)
                        queue.clear()
                        await self._send_text(_one_frame(texts))
                    else:
                        await self._send_text(queue.popleft())
                if self._close_with is not None and not queue:
                    await self._close(*self._close_with)
                    self._finish()
                    return
                self._wake = loop.create_future()
                await self._wake
                self._wake = None
        except asyncio.CancelledError:
            raise
        except Exception:  # the socket failed: its reader sees it too
            self._die()

    def _finish(self) -> None:
        if not self.dead:
            self.dead = True
            if self._on_dead is not None:
                self._on_dead()

    def _die(self) -> None:
        if self.dead:
            return
        self._queue.clear()
        if asyncio.current_task() is not self._writer:
            self._writer.cancel()
        self._finish()


def _one_frame(texts: Sequence[str]) -> str:
    """A batching socket's frame: one message as itself, several as an array."""
    return texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]"
