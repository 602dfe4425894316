"""A test client for the room socket that checks the protocol as it reads.

Every frame read is checked against docs/protocol.md: it carries `v`; after the
first view on a socket, versions never jump by more than one; acks and errors
name their request.  Tests then assert on behaviour, not on framing.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from app.games import GAMES

Msg = dict[str, Any]
CARD = re.compile(r"^(?:10|[2-9AJQK])[CDHS]$|^JK$")


def cards_in(obj: Any) -> list[str]:
    """Every string in a JSON value that is a card code."""
    out: list[str] = []
    if isinstance(obj, str):
        if CARD.match(obj):
            out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            out.extend(cards_in(v))
    elif isinstance(obj, list):
        for v in obj:
            out.extend(cards_in(v))
    return out


def public_played(game: dict[str, Any]) -> tuple[set[str], list[str]]:
    """Big Two's list of every card played so far: public (each was shown to
    the table), and with the hands one deck - a hidden card slipped in among
    them would be one too many.  The cards, and what is wrong with the list."""
    played = list(game.get("played") or [])
    wrong = []
    if len(set(played)) != len(played):
        wrong.append(f"a card played twice in {played}")
    if set(played) & set(game.get("hand") or []):
        wrong.append(f"played cards still in the hand: {played}")
    if "counts" in game and len(played) + sum(game["counts"]) != 52:
        wrong.append(f"{len(played)} played and {sum(game['counts'])} held are not one deck")
    return set(played), wrong


def create(client: TestClient, game: str, name: str = "Ann", **body: Any) -> Msg:
    r = client.post("/api/rooms", json={"game": game, "name": name, **body})
    assert r.status_code == 200, r.text
    return dict(r.json())


def join(client: TestClient, code: str, name: str, **body: Any) -> Msg:
    r = client.post(f"/api/rooms/{code}/join", json={"name": name, **body})
    assert r.status_code == 200, r.text
    return dict(r.json())


class Sock:
    """One tab's socket."""

    def __init__(self, ws: WebSocketTestSession, *, batch: bool = False) -> None:
        self.ws = ws
        self.batch = batch
        self.frames: list[Msg] = []
        self.view: Msg | None = None
        self.events: list[Msg] = []
        self.v: int | None = None
        #: the room incarnation of the last view (what a resume names with `v`)
        self.inc: str | None = None
        self._next_id = 0
        self._unread: list[Msg] = []  # messages of a batched frame not yet returned
        self.raw_frames: list[Any] = []

    # reading -----------------------------------------------------------------
    def recv(self) -> Msg:
        if not self._unread:
            frame = self.ws.receive_json()
            self.raw_frames.append(frame)
            if isinstance(frame, list):
                assert len(frame) > 1, "a batch holds several messages"
                self._unread = list(frame)
            else:
                self._unread = [frame]
        msg: Msg = self._unread.pop(0)
        self.frames.append(msg)
        assert "v" in msg and isinstance(msg["v"], int), msg
        if "view" in msg or "event" in msg:
            if self.view is not None and self.v is not None:
                assert msg["v"] <= self.v + 1, f"version gap: {self.v} -> {msg['v']}"
            if "view" in msg:
                view = msg["view"]
                if "room" not in view:  # batched: the room part is as last sent
                    assert self.batch and self.view is not None, "a view without its room"
                    view = {"room": self.view["room"], **view}
                self.view = view
                self.v = msg["v"]
                self.inc = msg["inc"]
            else:
                self.events.append(msg["event"])
                if self.view is not None:
                    self.v = max(self.v or 0, msg["v"])
        return msg

    def until(self, pred: Callable[[Msg], bool], limit: int = 20_000) -> Msg:
        for _ in range(limit):
            msg = self.recv()
            if pred(msg):
                return msg
        raise AssertionError("expected message never came")

    def until_view(self, pred: Callable[[Msg], bool], *, fresh: bool = False) -> Msg:
        """The latest view once `pred` holds for it (the current one counts unless `fresh`)."""
        if not fresh and self.view is not None and pred(self.view):
            return dict(self.view)
        msg = self.until(lambda m: "view" in m and bool(pred(m["view"])))
        return dict(msg["view"])

    # writing -----------------------------------------------------------------
    def send(self, **msg: Any) -> int:
        self._next_id += 1
        self.ws.send_json({"id": self._next_id, **msg})
        return self._next_id

    def reply(self, msg_id: int) -> Msg:
        return self.until(lambda m: m.get("re") == msg_id)

    def act(self, action: Msg) -> Msg:
        return self.reply(self.send(action=action))

    def cmd(self, type_: str, **fields: Any) -> Msg:
        return self.reply(self.send(cmd={"type": type_, **fields}))

    def ok(self, reply: Msg) -> Msg:
        assert reply.get("ok") is True, reply
        return reply

    # state -------------------------------------------------------------------
    @property
    def game(self) -> Msg:
        assert self.view is not None and self.view["game"] is not None
        return dict(self.view["game"])

    @property
    def status(self) -> str:
        assert self.view is not None
        return str(self.view["room"]["status"])


@contextlib.contextmanager
def connect(
    client: TestClient,
    code: str,
    token: str,
    since: int | None = None,
    *,
    inc: str | None = None,
    batch: bool = False,
) -> Iterator[Sock]:
    """A socket on the room; `since` in incarnation `inc` resumes (docs/protocol.md)."""
    with client.websocket_connect(f"/ws/rooms/{code}") as ws:
        ws.send_json(hello(token, since, inc=inc, batch=batch))
        sock = Sock(ws, batch=batch)
        yield sock


def hello(
    token: str, since: int | None = None, *, inc: str | None = None, batch: bool = False
) -> Msg:
    """A socket's first message: the seat token (never in the URL)."""
    msg: Msg = {"auth": token, "batch": batch}
    if since is not None:
        msg["since"] = since
    if inc is not None:
        msg["inc"] = inc
    return msg


def play_to_end(
    sock: Sock,
    choose: Callable[[Msg, list[Msg]], Msg] | None = None,
    *,
    rng: random.Random | None = None,
    tolerate: frozenset[str] = frozenset(),
) -> Msg:
    """Act whenever this seat's latest view has legal actions, until the room's
    game is over; returns the final view.  Errors other than `tolerate` fail."""
    rng = rng or random.Random(1)
    pending: int | None = None
    acted_on = -1
    msg: Msg = {}
    while True:
        view = sock.view
        if view is not None:
            if view["room"]["status"] == "finished" and pending is None:
                return view
            if pending is None and view.get("legal") and sock.v is not None and sock.v > acted_on:
                legal = view["legal"]
                action = choose(view, legal) if choose else rng.choice(legal)
                acted_on = sock.v
                pending = sock.send(action=action)
        msg = sock.recv()
        if pending is not None and msg.get("re") == pending:
            if "error" in msg:
                assert msg["error"]["code"] in tolerate, msg
            pending = None


def register(name: str, game: Any) -> Callable[[], None]:
    GAMES[name] = game

    def undo() -> None:
        GAMES.pop(name, None)

    return undo
