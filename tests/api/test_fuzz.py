"""A fuzzer on the real protocol: Hypothesis sends random and mutated frames
over real WebSockets to a real uvicorn serving the app, in a room of every
game, and checks after each one that

- the server never fails: no 1011 close, no exception in its log;
- every frame gets exactly one answer, and a refused one an error code;
- a refused frame changes nothing: the room's version is the same and a fresh
  view equals the last one;
- no frame any socket receives holds a card its seat may not know (judged
  against the engine's own state by tests/rooms/knowledge.py).

Every seat is a socket the test drives, so the room moves only when the test
says (a step either sends a fuzzed frame from some seat, or has a seat play a
legal move), and what each seat may know is exact before and after each step.
`make test` sends SHORT_FRAMES (about 15 s); `make test-slow`, which CI runs
too, at least 10,000 (FRAMES_PER_GAME per game, about 130 s); set
FUZZ_FRAMES=50000 (and FUZZ_SEED to repeat a run) for a longer one.  The counts and the seed print
at the end; a failure prints Hypothesis's reproduction blob.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from app.core.config import Settings
from app.main import create_app
from app.rooms.room import Room
from app.store.records import MemoryRecords
from tests.api.conftest import OPEN_DOORS
from tests.rooms.knowledge import KNOWN, leaks, revealed
from tests.seeds import seeded
from tests.services import IN_CI, serving

#: seats per room: Big Two needs four, the others are played by three
SEATS = {"bigtwo": 4, "posso": 3, "possession": 3, "possum": 3}
FRAMES_PER_GAME = int(os.environ.get("FUZZ_FRAMES", "10400")) // len(SEATS)
#: long windows: the fuzz never waits on a timer, and no timer fires mid-step
SLOW_TIMERS = {"bot_delay": 0, "posso_window": 15, "posso_answer": 60, "cut": 120}
COMMANDS = [
    "sit", "start", "rematch", "add_bot", "remove_bot", "kick", "chat", "set_game",
    "set_settings", "make_host", "hand_to_bot", "seat_link", "move_link", "resync", "autoplay",
    "fly", "",
    "LEAVE",
]  # fmt: skip
CARDS = ["3C", "AS", "10H", "JK", "2D", "KH", "QS", "5C", "1H", "ZZ", "3c", ""]

json_leaf = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text()
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
frame_id = st.one_of(st.integers(-5, 10**6), st.text(max_size=6), st.none(), json_value)


class ServerFailed(AssertionError):
    pass


class ErrorLog(logging.Handler):
    """Every error or exception the server logs while the fuzz runs."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


@dataclass
class Seat:
    ws: ClientConnection
    player: str
    view: dict[str, Any] | None = None
    v: int = -1


@dataclass
class Counts:
    frames: int = 0
    refused: int = 0
    accepted: int = 0
    moves: int = 0
    codes: Counter[str] = field(default_factory=Counter)


class Table:
    """One room of `game`, every seat a socket of the test's."""

    def __init__(self, base: str, room_of: Any, game: str, counts: Counts) -> None:
        self.base, self.game, self.counts = base, game, counts
        http = httpx.Client(base_url=f"http://{base}")
        body = {"game": game, "name": "P0", "settings": SLOW_TIMERS}
        tickets = [http.post("/api/rooms", json=body).json()]
        code = tickets[0]["code"]
        for i in range(1, SEATS[game]):
            tickets.append(http.post(f"/api/rooms/{code}/join", json={"name": f"P{i}"}).json())
        self.room: Room = room_of(code)
        self.seats: list[Seat] = []
        self.sockets = contextlib.ExitStack()
        for t in tickets:
            ws = self.sockets.enter_context(connect(f"ws://{base}/ws/rooms/{code}"))
            ws.send(json.dumps({"auth": t["token"]}))
            self.seats.append(Seat(ws, t["player"]))
        self.next_id = 0
        self.sync_all()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.sockets.close()

    # reading ----------------------------------------------------------------
    def known(self) -> list[Counter[str]]:
        room, judge = self.room, KNOWN[self.room.game.name]
        out = []
        for s in self.seats:
            seat = room.game_seat.get(s.player) if room.state is not None else None
            out.append(judge(room.state, seat) if room.state is not None else Counter())
        return out

    def recv(self, i: int, before: list[Counter[str]], state_before: Any) -> dict[str, Any]:
        seat = self.seats[i]
        try:
            raw = seat.ws.recv(timeout=10)
        except ConnectionClosed as err:
            code = err.rcvd.code if err.rcvd else None
            raise ServerFailed(f"seat {i}'s socket closed ({code}): {err}") from None
        msg = json.loads(raw)
        assert isinstance(msg, dict) and isinstance(msg.get("v"), int), msg
        if self.room.state is not None and self.room.game.name in KNOWN:
            after = self.known()
            found = leaks(
                before[i], after[i], msg, revealed(self.room.game.name, state_before, msg)
            )
            assert not found, f"seat {i} was sent hidden cards: {found} in {msg}"
        if "view" in msg:
            seat.view, seat.v = msg["view"], msg["v"]
        elif "event" in msg:
            seat.v = max(seat.v, msg["v"])
        return dict(msg)

    def sync_all(self) -> None:
        """Read every socket up to the room's version."""
        before, state = self.known(), self.room.state
        for i, s in enumerate(self.seats):
            while s.view is None or s.v < self.room.v:
                self.recv(i, before, state)

    def send(self, i: int, frame: str | bytes, *, count: bool = True) -> dict[str, Any]:
        """Send one frame from seat i; its answer.  When it changed the room,
        every seat reads up to the change and asks for a fresh view (a change
        may end in events alone, which would leave a seat's view behind)."""
        before, state = self.known(), self.room.state
        v_before = self.room.v
        self.seats[i].ws.send(frame)
        self.counts.frames += count
        msg = self._reply(i, before, state)
        if "error" not in msg or self.room.v != v_before:
            for j in range(len(self.seats)):
                self.seats[j].ws.send(self.obj({"cmd": {"type": "resync"}}))
                self._reply(j, before, state)
        return msg

    def _reply(self, i: int, before: list[Counter[str]], state: Any) -> dict[str, Any]:
        while True:
            msg = self.recv(i, before, state)
            if "re" in msg:
                return msg

    def obj(self, body: dict[str, Any]) -> str:
        self.next_id += 1
        return json.dumps({"id": self.next_id, **body})

    # steps ------------------------------------------------------------------
    def fuzz(self, i: int, frame: str | bytes) -> None:
        seat = self.seats[i]
        v_before, view_before = self.room.v, seat.view
        reply = self.send(i, frame)
        if "error" not in reply:
            self.counts.accepted += 1
            return
        self.counts.refused += 1
        code = reply["error"].get("code")
        assert isinstance(code, str) and code and reply["error"].get("message"), reply
        self.counts.codes[code] += 1
        assert reply["v"] == v_before == self.room.v, f"a refused frame changed the room: {reply}"
        fresh = self.send(i, self.obj({"cmd": {"type": "resync"}}), count=False)
        assert fresh.get("ok") is True, fresh
        after, was = _still(seat.view), _still(view_before)
        assert after == was, f"a refused frame changed the view: {_diff(was, after)}"

    def move(self, rng: random.Random) -> None:
        """The seat whose turn it is plays a legal move; between games the
        host starts the next one."""
        for i, s in enumerate(self.seats):
            legal = (s.view or {}).get("legal")
            if legal:
                reply = self.send(i, self.obj({"action": rng.choice(legal)}), count=False)
                assert reply.get("ok") is True, reply
                self.counts.moves += 1
                return
        if self.room.status != "playing":
            host = next(
                i for i, s in enumerate(self.seats) if s.player == self.room.record.host_player_id
            )
            kind = "rematch" if self.room.status == "finished" else "start"
            reply = self.send(host, self.obj({"cmd": {"type": kind}}), count=False)
            assert reply.get("ok") is True, reply


def _still(view: dict[str, Any] | None) -> Any:
    """A view without what moves by itself (the timer's deadline)."""
    return {k: v for k, v in (view or {}).items() if k != "timer"}


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d for k in sorted(set(a) | set(b)) for d in _diff(a.get(k), b.get(k), f"{path}.{k}")
        ]
    return [] if a == b else [f"{path}: {a!r} -> {b!r}"[:300]]


def _mutated_action(draw: Any) -> Callable[[list[Any]], Any]:
    """A legal action of the seat's, changed in one way.  Every value is drawn
    before the view is known (Hypothesis must see the same draws for the same
    choices whatever the room holds), then applied to it."""
    pick, how, key_at = draw(st.integers(0, 999)), draw(st.integers(0, 6)), draw(st.integers(0, 9))
    kind = draw(st.text(max_size=10) | st.sampled_from(["play", "pass", "draw", "call"]))
    cards = draw(st.lists(st.sampled_from(CARDS), max_size=6))
    value, new_key = draw(json_value), draw(st.text(max_size=6))

    def make(legal: list[Any]) -> Any:
        base: Any = dict(legal[pick % len(legal)]) if legal else {"type": "play"}
        keys = sorted(base)
        if how == 0:
            base.pop(keys[key_at % len(keys)])
        elif how == 1:
            base["type"] = kind
        elif how == 2:
            base["cards"] = cards
        elif how == 3:
            base[keys[key_at % len(keys)]] = value
        elif how == 4:
            base[new_key] = value
        elif how == 5:
            base = value
        return base

    return make


def _command(draw: Any) -> dict[str, Any]:
    cmd: dict[str, Any] = {"type": draw(st.sampled_from(COMMANDS))}
    for key in draw(st.sets(st.sampled_from(["seat", "text", "game", "options", "settings"]))):
        if key == "seat":
            cmd[key] = draw(st.integers(-2, 11) | st.none() | json_value)
        elif key == "text":
            cmd[key] = draw(st.text(max_size=600) | json_value)
        elif key == "game":
            cmd[key] = draw(st.sampled_from([*SEATS, "chess", ""]) | json_value)
        elif key == "settings":
            # no timer: a timer firing mid-step would move the room by itself
            keys = st.sampled_from(["public_replays", "bot_delay", "typo", "turn_timer"])
            value = st.booleans() | st.text(max_size=4) | st.integers(-10, 10_000) | json_value
            cmd[key] = draw(st.dictionaries(keys, value, max_size=3) | json_value)
            if isinstance(cmd[key], dict) and "turn_timer" in cmd[key]:
                cmd[key]["turn_timer"] = draw(st.sampled_from([-1, 3, 10**6, "x", []]))
        else:
            cmd[key] = draw(json_value)
    return cmd


def _in_lockstep(cmd: dict[str, Any], game: str) -> dict[str, Any]:
    """Commands that would bring in a bot (which moves by itself) or take a
    socket away are sent only in forms the room refuses: every other form of
    every command goes through."""
    kind = cmd["type"]
    if kind in ("add_bot", "kick") or (kind == "sit" and cmd.get("seat") is None):
        cmd["seat"] = 99 if not isinstance(cmd.get("seat"), str) else cmd["seat"]
    if kind == "set_game" and isinstance(cmd.get("game"), str) and cmd["game"] in SEATS:
        cmd["game"] = game  # Big Two would fill the empty seats of a smaller table with bots
    return cmd


Maker = Callable[[list[Any], str], "str | bytes"]


@st.composite
def frames(draw: Any) -> Maker:
    """A frame to send, given the sender's legal actions and the room's game."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        raw: str | bytes = bytes(draw(st.binary(max_size=64)))
        return lambda legal, game: raw
    if kind == 1:
        raw = str(draw(st.text(max_size=64)))
        return lambda legal, game: raw
    if kind == 2:
        raw = json.dumps(draw(json_value))
        return lambda legal, game: raw
    if kind == 3:
        raw = "x" * draw(st.integers(4097, 6000))  # over the app's limit
        return lambda legal, game: raw
    msg_id = draw(frame_id)
    action = _mutated_action(draw) if kind not in (7, 8) else None
    cmd = _command(draw) if kind >= 7 else None
    keep_id, as_bytes = draw(st.booleans()), draw(st.integers(0, 9)) == 0

    def make(legal: list[Any], game: str) -> str | bytes:
        body: dict[str, Any] = {"id": msg_id} if keep_id else {}
        if action is not None:
            body["action"] = action(legal)
        if cmd is not None:
            body["cmd"] = _in_lockstep(dict(cmd), game)
        text = json.dumps(body)
        return text.encode() if as_bytes else text

    return make


#: the frames and the deals of a run: FUZZ_SEED repeats one; CI runs the
#: same one every time (tests/conftest.py)
FUZZ_SEED = (
    20 if IN_CI else int(os.environ.get("FUZZ_SEED", "0")) or random.SystemRandom().randrange(2**32)
)


@pytest.fixture
def server() -> Iterator[tuple[str, Any, ErrorLog]]:
    records = MemoryRecords()
    limits = Settings(max_frame_bytes=4096, max_messages_per_second=1e9, **OPEN_DOORS)
    app = create_app(limits, records, seeds=seeded(f"fuzz:{FUZZ_SEED}"))  # deals repeat too
    errors = ErrorLog()
    # the app's loggers reach the root; uvicorn's own ("Exception in ASGI
    # application") stop at "uvicorn", which uvicorn configures as it starts
    watched = [logging.getLogger(), logging.getLogger("uvicorn")]
    with serving(app) as base:
        for logger in watched:
            logger.addHandler(errors)
        try:
            yield base, app.state.rooms.get, errors
        finally:
            for logger in watched:
                logger.removeHandler(errors)


def _fuzz_game(
    base: str, room_of: Any, game: str, frames_wanted: int, counts: Counts, seed_: int
) -> None:
    table = Table(base, room_of, game, counts)
    start = counts.frames
    rng = random.Random(f"{seed_}-{game}")
    failures: list[str] = []
    seats = len(table.seats)
    step = st.none() | st.tuples(st.integers(0, seats - 1), frames())
    try:

        @seed(seed_)
        @settings(
            max_examples=max(10, frames_wanted // 10),
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            # the room lives on between examples, so an example can be neither
            # replayed nor shrunk: a failure is reported as found, with its step
            phases=[Phase.generate],
        )
        @given(plan=st.lists(step, min_size=10, max_size=40))
        def run(plan: list[tuple[int, Maker] | None]) -> None:
            if failures or counts.frames - start >= frames_wanted:
                return
            steps: list[str] = []
            try:
                for one in plan:
                    if one is None:
                        steps.append("a legal move")
                        table.move(rng)
                        continue
                    i, make = one
                    legal = list((table.seats[i].view or {}).get("legal") or [])
                    frame = make(legal, table.room.game.name)
                    steps.append(f"seat {i}: {frame!r}"[:400])
                    table.fuzz(i, frame)
            except Exception as err:  # reported below: Hypothesis would take it for flakiness
                failures.append(f"{game}: {err!r}\nlast steps:\n" + "\n".join(steps[-5:]))

        while not failures and counts.frames - start < frames_wanted:
            run()
    finally:
        table.close()
    assert not failures, f"seed {seed_}: " + failures[0]


def _fuzz(
    server: tuple[str, Any, ErrorLog], total: int, capsys: pytest.CaptureFixture[str]
) -> Counts:
    base, room_of, errors = server
    counts = Counts()
    per_game: dict[str, int] = {}
    seed_ = FUZZ_SEED
    for game in SEATS:
        before = counts.frames
        _fuzz_game(base, room_of, game, total // len(SEATS), counts, seed_)
        per_game[game] = counts.frames - before
    assert not errors.records, errors.records[:3]
    with capsys.disabled():
        print(
            f"\nfuzz (seed {seed_}, FUZZ_SEED to repeat): {counts.frames} frames "
            f"({per_game}), {counts.refused} refused, "
            f"{counts.accepted} accepted, {counts.moves} legal moves between them; "
            f"refusal codes {dict(counts.codes.most_common())}"
        )
    assert counts.frames >= total
    assert counts.refused > counts.frames // 2  # most fuzzed frames are nonsense
    return counts


#: `make test` fuzzes a tenth of what CI's `make test-slow` does (about
#: 15 s against 130 s here): the long run holds the 10,000 frames CI asks for
SHORT_FRAMES = 1_000


# the server runs in a thread of this process and draws from `random` for its
# own ends (bot jitter, deals) while Hypothesis draws frames; that is not a
# strategy using `random`, which is what this warning is about
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
@pytest.mark.timeout(120 + SHORT_FRAMES // 20)
def test_the_protocol_survives_a_few_thousand_fuzzed_frames(
    server: tuple[str, Any, ErrorLog], capsys: pytest.CaptureFixture[str]
) -> None:
    counts = _fuzz(server, SHORT_FRAMES, capsys)
    # the short run still reaches every kind of answer: refusals, accepted
    # frames, and legal moves that carry the games on between them
    assert counts.frames >= SHORT_FRAMES and counts.accepted > 0 and counts.moves > 0


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
@pytest.mark.timeout(120 + FRAMES_PER_GAME * len(SEATS) // 20)
def test_the_protocol_survives_ten_thousand_fuzzed_frames(
    server: tuple[str, Any, ErrorLog], capsys: pytest.CaptureFixture[str]
) -> None:
    counts = _fuzz(server, FRAMES_PER_GAME * len(SEATS), capsys)
    assert counts.frames >= 10_000 or FRAMES_PER_GAME * len(SEATS) < 10_000
