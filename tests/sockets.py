"""A browser tab on a real socket, for tests against real servers: it checks
that versions never skip, keeps the latest view, plays its seat as a bot would,
and remembers every action the server acknowledged."""

from __future__ import annotations

import random
import time
from contextlib import ExitStack
from typing import Any

import orjson
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from app.bots import bot_for

Msg = dict[str, Any]


class Player:
    """One browser tab on a real socket: reads frames, checks that versions never
    skip, keeps the latest view, and plays its seat as a bot would."""

    def __init__(
        self, base: str, code: str, ticket: Msg, since: tuple[str, int] | None = None
    ) -> None:
        """`since`: (incarnation, version) to resume from."""
        self.ticket = ticket
        self.url = f"ws://{base}/ws/rooms/{code}"
        self._stack = ExitStack()
        self.ws: ClientConnection = self._stack.enter_context(ws_connect(self.url))
        # the token goes in the first message, never in the URL (docs/protocol.md)
        hello: Msg = {"auth": ticket["token"], "batch": True}
        if since is not None:
            hello["inc"], hello["since"] = since
        self.ws.send(orjson.dumps(hello).decode())
        self.v: int | None = since[1] if since is not None else None
        #: the room incarnation of the last view
        self.inc: str | None = since[0] if since is not None else None
        self.view: Msg | None = None
        self.events: list[Msg] = []
        self.replies: dict[int, Msg] = {}
        self.first_v: int | None = None
        #: (seat, action) of every action the server acknowledged, in order
        self.acked: list[tuple[int, Msg]] = []
        self._ids = 0
        self._acted_on = -1
        self._pending: int | None = None
        self._pending_action: tuple[int, Msg] | None = None

    def close(self) -> None:
        self._stack.close()

    def read(self, timeout: float = 0.02) -> bool:
        """Take one frame if one comes within `timeout`; False if none did."""
        try:
            raw = self.ws.recv(timeout=timeout)
        except TimeoutError:
            return False
        frame = orjson.loads(raw)
        for msg in frame if isinstance(frame, list) else [frame]:
            self._take(msg)
        return True

    def _take(self, msg: Msg) -> None:
        v = msg["v"]
        if "re" in msg:
            self.replies[msg["re"]] = msg
            if msg["re"] == self._pending:
                # a refusal is a race lost to a timer or a bot (the table moved on
                # since the view acted on), never a move the view offered wrongly
                assert "error" not in msg or msg["v"] > self._acted_on, msg
                if "error" not in msg and self._pending_action is not None:
                    self.acked.append(self._pending_action)
                self._pending = None
            return
        if self.first_v is None:
            self.first_v = v
        if self.v is not None:
            assert v in (self.v, self.v + 1), f"version gap: {self.v} -> {v}"
        self.v = v
        if "view" in msg:
            self.inc = msg["inc"]
            view = msg["view"]
            if "room" not in view:  # batched: the room part is as last sent
                assert self.view is not None
                view = {**view, "room": self.view["room"]}
            self.view = view
        else:
            self.events.append(msg["event"])

    def send(self, **body: Any) -> int:
        self._ids += 1
        self.ws.send(orjson.dumps({"id": self._ids, **body}).decode())
        return self._ids

    def reply(self, msg_id: int, within: float = 10) -> Msg:
        deadline = time.monotonic() + within
        while msg_id not in self.replies:
            assert time.monotonic() < deadline, f"no reply to {msg_id}"
            self.read(0.1)
        return self.replies[msg_id]

    def cmd(self, type_: str, **fields: Any) -> Msg:
        return self.reply(self.send(cmd={"type": type_, **fields}))

    def step(self, rng: random.Random) -> Msg | None:
        """Act once if this seat has something to do in a view not acted on
        yet; the action sent, if any."""
        view = self.view
        if view is None or self._pending is not None or self.v is None:
            return None
        legal = view.get("legal")
        if legal and self.v > self._acted_on and view["room"]["status"] == "playing":
            seat = view["you"]["seat"]
            action: Msg = bot_for(view["room"]["game"]).choose(view["game"], legal, seat, rng)
            self._acted_on = self.v
            self._pending_action = (seat, action)
            self._pending = self.send(action=action)
            return action
        return None

    @property
    def status(self) -> str:
        assert self.view is not None
        return str(self.view["room"]["status"])

    def room_events(self, what: str) -> list[Msg]:
        return [e for e in self.events if e.get("type") == "room" and e.get("what") == what]


def play(players: list[Player], rng: random.Random, until: Any, within: float = 120) -> None:
    """Let these players play until `until()` holds."""
    deadline = time.monotonic() + within
    while not until():
        assert time.monotonic() < deadline, "the table stalled"
        for p in players:
            p.step(rng)
            while p.read(0.005):
                pass
