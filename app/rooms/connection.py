"""One socket's outbound side (`Connection`: a queue), and what sends the
queues of all of a loop's sockets (`Outbox`: a lane, one task).

The room never awaits a socket.  It hands already-encoded frames to the
connection, which queues them and tells the loop's outbox it has something
to send.  The outbox's lane - one task for every socket of the process -
then sends each ready socket's frames in turn, in order, through the
socket's own `send_text` (Starlette's, in production).  A turn of the loop
in which a change went to four sockets and a message to a fifth costs one
step of one task, not five.

A send that does not finish at once (a peer that stopped reading, its
buffers full) must not hold up the others, so the lane is left to that
socket alone: each round the lane schedules a check for the loop's next
turn (`Outbox._check`), and if the lane is still waiting in a send then,
that socket keeps the task (it now sends that socket's frames and nothing
else, until its queue is empty) and a new lane takes everyone else's.  So a
slow peer costs the others one turn of the loop, once, and fills only its
own queue; past a limit the connection is dropped (the client reconnects
with `since` and catches up), and its task with it.

While the room works on a socket's own message it holds that socket
(`hold`/`release`): the change's events and view and the message's ack then
leave together - as one frame on a batching socket (docs/protocol.md).  A
batching socket's frames are always sent all at once as one frame, so a
change's events and view, pushed together, cost one send.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
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
    event loop: its frames go out through that loop's outbox."""

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
        self._outbox = outbox()
        #: the task sending for this socket alone, while its peer is slow
        #: (`Outbox._check`); None while the outbox's lane serves it
        self._writer: asyncio.Task[None] | None = None
        self.dead = False
        self.closing = False
        #: send everything queued at once as one JSON array frame, and views
        #: without an unchanged room part (see docs/protocol.md)
        self.batch = batch
        #: the room part this socket's last view carried (Delivery.view_frame)
        self.room_seen: object | None = None

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
        if not self._held and self._writer is None:
            self._outbox.ready(self)

    def close(self, code: int, reason: str) -> None:
        """Send what is queued, then close with `code`; later pushes are dropped."""
        if self.dead or self.closing:
            return
        self.closing = True
        self._close_with = (code, reason)
        if self._writer is None:
            self._outbox.ready(self)

    def hold(self) -> None:
        """Keep what is pushed from now on until `release` (one message's replies)."""
        self._held = True

    def release(self) -> None:
        """Let what was held back go."""
        self._held = False
        if (self._queue or self.closing) and self._writer is None:
            self._outbox.ready(self)

    async def stop(self) -> None:
        """Forget the socket (it is gone, or its handler is leaving)."""
        self.dead = True
        self._queue.clear()
        if self._writer is not None:
            self._writer.cancel()

    # --------------------------------------------------------------- giving up

    def _finish(self) -> None:
        if not self.dead:
            self.dead = True
            if self._on_dead is not None:
                self._on_dead()

    def _die(self) -> None:
        if self.dead:
            return
        self._queue.clear()
        writer = self._writer
        if writer is not None and asyncio.current_task() is not writer:
            writer.cancel()
        self._finish()


class Outbox:
    """Sends the queued frames of one event loop's connections, from one task
    (the lane) that lives while there is something to send.  See the
    module's docstring for why, and for what a slow peer does to it."""

    def __init__(self) -> None:
        #: connections with something to send, in the order they said so
        self._ready: dict[Connection, None] = {}
        self._lane: asyncio.Task[None] | None = None
        #: the lane's current round: the connections it took, and the next one
        self._batch: list[Connection] = []
        self._next = 0
        self._round = 0
        #: the connection whose send the lane is in (None between sends)
        self._sending: Connection | None = None

    def ready(self, conn: Connection) -> None:
        """`conn` has frames (or a close) to send."""
        self._ready[conn] = None
        lane = self._lane
        # (a lane cancelled before its first step never ran its clean-up)
        if lane is None or lane.done():
            self._lane = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        """Send each ready socket's frames (and its close, when asked), round
        after round, until nothing is ready; a failed send gives that socket
        up (its reader sees it too).  One loop for the lane and for a slow
        peer's own task: a coroutine per socket and round would cost more
        than the send."""
        me = asyncio.current_task()
        loop = asyncio.get_running_loop()
        try:
            while self._ready and self._lane is me:
                batch = self._batch = list(self._ready)
                self._ready.clear()
                self._round += 1
                loop.call_soon(self._check, self._round)
                for i, conn in enumerate(batch):
                    self._next = i + 1
                    self._sending = conn
                    queue, send = conn._queue, conn._send_text
                    try:
                        while queue and not conn._held and not conn.dead:
                            if conn.batch:
                                texts = list(queue)
                                queue.clear()
                                await send(_one_frame(texts))
                            else:
                                await send(queue.popleft())
                        if conn._close_with is not None and not queue and not conn.dead:
                            await conn._close(*conn._close_with)
                            conn._finish()
                    except asyncio.CancelledError:  # the socket is nobody's task now
                        if conn._writer is me:
                            conn._writer = None
                        raise
                    except Exception:
                        conn._die()
                    if self._lane is not me:
                        # `_check` left this task to `conn`, and it has sent
                        # all it had (pushes while it was `_writer` included)
                        conn._writer = None
                        return
                # (not kept past its round: a connection holds its outbox)
                self._batch, self._sending = [], None
        finally:
            if self._lane is me:
                self._lane = None
                self._sending = None

    def _check(self, round_: int) -> None:
        """A turn of the loop after round `round_` began: if the lane still
        waits in one socket's send, that socket keeps the task and a new
        lane sends everyone else's frames (the rest of the round first)."""
        slow = self._sending
        if round_ != self._round or slow is None:
            return  # the round went out in one go, as nearly every round does
        assert self._lane is not None
        slow._writer = self._lane
        if slow.dead:  # dropped while it waited: nothing left to send it
            self._lane.cancel()
        ready = dict.fromkeys(self._batch[self._next :])
        ready.update(self._ready)
        ready.pop(slow, None)
        self._ready, self._batch, self._sending = ready, [], None
        self._lane = asyncio.get_running_loop().create_task(self._run()) if ready else None


#: each running loop's outbox (tests run many loops; a process serves from one)
_outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Outbox] = (
    weakref.WeakKeyDictionary()
)


def outbox() -> Outbox:
    """The running loop's outbox."""
    loop = asyncio.get_running_loop()
    box = _outboxes.get(loop)
    if box is None:
        box = _outboxes[loop] = Outbox()
    return box


def _one_frame(texts: Sequence[str]) -> str:
    """A batching socket's frame: one message as itself, several as an array."""
    return texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]"
