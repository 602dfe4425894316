"""One socket's outbound side, decoupled from the room.

The room never awaits a socket: it hands already-encoded frames to the
connection, which starts the send right there.  A send almost always finishes
at once (the transport takes the bytes).  Only a send that has to wait - the
peer stopped reading and the transport paused - is parked, and resumed when
what it waits on completes; until then later frames stay queued.  A peer that
stops reading therefore fills only its own queue, and past a limit the
connection is dropped (the client reconnects with `since` and catches up): one
slow or dead socket can never hold up a room or the rooms around it.

While the room works on a socket's own message it holds that socket
(`hold`/`release`): the change's events and view and the message's ack then
leave together, as one frame on a batching socket.  Every other socket's
frames go out as they are pushed, so a change reaches the table without a
wait for the next turn of the event loop.  Driving the send coroutines by
hand, instead of from a writer task per socket or a callback per flush, saves
a task switch or a scheduled callback per frame on the hot path
(bench/load.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, cast

log = logging.getLogger(__name__)

SendText = Callable[[str], Awaitable[None]]
Close = Callable[[int, str], Awaitable[None]]

#: frames waiting for one socket before it counts as too slow
MAX_QUEUE = 512


class Connection:
    """An authenticated socket in a room.  `player_id` says whose it is; `on_dead`
    runs once when the connection gives up (slow peer, failed send) or has sent
    its close, so the socket's reader can stop too."""

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
        self._queue: deque[str | tuple[int, str]] = deque()
        self._held = False
        self._parked: Coroutine[Any, Any, Any] | None = None
        self._closed_sent = False
        self.dead = False
        self.closing = False
        #: send everything queued at once as one JSON array frame, and views
        #: without an unchanged room part (see docs/protocol.md)
        self.batch = batch
        #: the room part this socket's last view carried (Room._view_frame)
        self.room_seen: object | None = None

    def push(self, frame: str) -> None:
        """Queue one encoded frame; never blocks."""
        self.push_all((frame,))

    def push_all(self, frames: Sequence[str]) -> None:
        """Send encoded frames, in order, or queue them; never blocks."""
        if self.dead or self.closing or not frames:
            return
        if not self._queue and not self._held and self._parked is None and self.batch:
            self._step(self._send_text(_one_frame(frames)))  # type: ignore[arg-type]
            return  # the usual case: nothing waiting, so nothing to queue
        if len(self._queue) + len(frames) > self._max_queue:
            log.info("dropping a socket that fell %d frames behind", len(self._queue))
            self._die()
            return
        self._queue.extend(frames)
        self._kick()

    def close(self, code: int, reason: str) -> None:
        """Send what is queued, then close with `code`; later pushes are dropped."""
        if self.dead or self.closing:
            return
        self.closing = True
        self._queue.append((code, reason))
        self._kick()

    def hold(self) -> None:
        """Keep what is pushed from now on until `release` (one message's replies)."""
        self._held = True

    def release(self) -> None:
        """Send what was held back, as one frame on a batching socket."""
        self._held = False
        self._kick()

    async def stop(self) -> None:
        """Forget the socket (it is gone, or its handler is leaving)."""
        self.dead = True
        self._queue.clear()
        self._abandon()

    # ----------------------------------------------------------------- sending

    def _kick(self) -> None:
        if not self._held and self._parked is None:
            self._flush()

    def _flush(self) -> None:
        queue = self._queue
        while queue and self._parked is None and not self.dead:
            if self.batch and not isinstance(queue[0], tuple):
                # a change's events and view (and ack) were pushed together: one frame
                item: str | tuple[int, str] = _one_frame(self._leading_frames())
            else:
                item = queue.popleft()
            if isinstance(item, tuple):
                self._closed_sent = True
                self._step(self._close(*item))  # type: ignore[arg-type]
            else:
                self._step(self._send_text(item))  # type: ignore[arg-type]

    def _leading_frames(self) -> Sequence[str]:
        """Take the queued frames up to a queued close (if any)."""
        queue = self._queue
        if not self.closing:  # the usual case: nothing but frames, all of them
            texts = list(cast("deque[str]", queue))
            queue.clear()
            return texts
        out: list[str] = []
        while queue and not isinstance(queue[0], tuple):
            out.append(queue.popleft())  # type: ignore[arg-type]
        return out

    def _step(self, coro: Coroutine[Any, Any, Any], *, resuming: bool = False) -> None:
        """Run a send until it finishes or must wait; park it if it must wait."""
        try:
            waiting = coro.send(None)
        except StopIteration:
            if resuming:
                self._parked = None
            if self._closed_sent:
                self._finish_close()
            elif resuming and self._queue:
                self._flush()
            return
        except (Exception, asyncio.CancelledError):  # the socket failed: its reader sees it too
            self._parked = None
            self._die()
            return
        self._parked = coro
        if waiting is None:  # a bare yield (sleep(0)): try again next tick
            asyncio.get_running_loop().call_soon(self._resume, coro)
        elif hasattr(waiting, "add_done_callback"):  # an asyncio future, as a Task would see
            waiting._asyncio_future_blocking = False
            waiting.add_done_callback(lambda _f: self._resume(coro))
        else:
            log.error("a socket send waited on %r; dropping the socket", waiting)
            self._die()

    def _resume(self, coro: Coroutine[Any, Any, Any]) -> None:
        if self._parked is coro:
            self._step(coro, resuming=True)

    def _finish_close(self) -> None:
        if not self.dead:
            self.dead = True
            if self._on_dead is not None:
                self._on_dead()

    def _abandon(self) -> None:
        coro, self._parked = self._parked, None
        if coro is not None:
            coro.close()

    def _die(self) -> None:
        if self.dead:
            return
        self.dead = True
        self._queue.clear()
        self._abandon()
        if self._on_dead is not None:
            self._on_dead()


def _one_frame(texts: Sequence[str]) -> str:
    """A batching socket's frame: one message as itself, several as an array."""
    return texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]"
