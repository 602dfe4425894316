"""A TCP proxy a test owns, in front of a shared service (PostgreSQL, Redis):
the test takes the service away from a server under test, and gives it back,
without touching the service itself, which other tests are using.

- `pause()`: bytes stop flowing both ways (held, not lost) and new
  connections wait: a service that hangs;
- `cut()`: every connection is reset and new ones are closed at once: a
  service that is down;
- `resume()`: back to passing everything through.

It runs on an event loop in a thread of its own, so a synchronous test can
drive it while its server runs in another process."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

from tests.services import free_port


class TcpProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._flowing = asyncio.Event()
        self._cut = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)

    async def _listen(self) -> None:
        self._flowing.set()
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._cut:
            writer.transport.abort()
            return
        await self._flowing.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer), self._pipe(up_reader, writer),
                return_exceptions=True,
            )  # fmt: skip
        finally:
            for w in (writer, up_writer):
                self._writers.discard(w)
                w.transport.abort()

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                await self._flowing.wait()  # paused: held here until resumed
                if self._cut:
                    break
                dst.write(data)
                await dst.drain()
        finally:
            dst.transport.abort()  # one side ended: so does the other

    def _call(self, fn: object) -> None:
        async def run() -> None:
            fn()  # type: ignore[operator]

        asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def pause(self) -> None:
        self._call(self._flowing.clear)

    def cut(self) -> None:
        def cut() -> None:
            self._cut = True
            self._flowing.set()  # anything held wakes, sees the cut, and ends
            for w in list(self._writers):
                w.transport.abort()

        self._call(cut)

    def resume(self) -> None:
        def resume() -> None:
            self._cut = False
            self._flowing.set()

        self._call(resume)

    def close(self) -> None:
        self.cut()

        async def stop() -> None:
            if self._server is not None:
                self._server.close()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@contextlib.contextmanager
def tcp_proxy(host: str, port: int) -> Iterator[TcpProxy]:
    proxy = TcpProxy(host, port)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()
