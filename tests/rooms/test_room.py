"""The room's own rules: ordering against the log, storage faults, timers,
bots, resuming, and rooms running side by side."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from app.games import GAMES
from app.rooms.delivery import Resume
from app.rooms.errors import RoomError
from app.rooms.ratelimit import TokenBucket
from app.rooms.room import HISTORY_MAX, Room
from app.store.records import MemoryRecords, RoomRecord
from tests.rooms.harness import (
    FakeSocket,
    Recorder,
    RecordingConnection,
    attach,
    drive,
    new_room,
    seat_people,
    settle,
)
from tests.rooms.tinygame import TINY
from tests.seeds import seeded

pytestmark = pytest.mark.timeout(60)


def replies(conn: RecordingConnection, msg_id: int) -> list[dict[str, Any]]:
    return [
        f.msg
        for f in conn.recorder.frames
        if f.msg.get("re") == msg_id and f.player == conn.player_id
    ]


class FlakyRecords(MemoryRecords):
    """Refuses to append while `down` is set, like a database that went away."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        if self.down:
            raise ConnectionError("database unavailable")
        await super().append_action(game_id, seq, seat, action, epoch)


class WatchingRecords(MemoryRecords):
    """Notes, at each append, how many frames had already been pushed."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder
        self.at_append: list[int] = []

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        self.at_append.append(len(self.recorder.frames))
        await asyncio.sleep(0)  # a real database yields here
        await super().append_action(game_id, seq, seat, action, epoch)


class SavingRecords(MemoryRecords):
    """Counts room saves, and refuses them while `down` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.saves = 0
        self.down = False

    async def save_room(self, room: RoomRecord, epoch: int = 0) -> None:
        if self.down:
            raise ConnectionError("database unavailable")
        self.saves += 1
        await super().save_room(room, epoch)


async def test_a_save_that_would_change_nothing_is_skipped_and_a_failed_one_is_retried() -> None:
    records = SavingRecords()
    room = new_room(TINY, options={"bidding": False}, records=records)
    recorder = Recorder()
    conns = await seat_people(room, 2, recorder)
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    await drive(room, conns, random.Random(5))
    saved = records.saves
    await room.handle(conns[0], 2, "cmd", {"type": "rematch"})  # same table, same people
    assert replies(conns[0], 2)[0]["ok"] is True and room.status == "playing"
    assert records.saves == saved
    records.down = True
    with pytest.raises(RoomError) as refused:  # a join that cannot be stored is undone
        await room.join("Watcher", spectator=True)
    assert refused.value.code == "storage_error"
    assert "Watcher" not in {p.name for p in room.players.values()}
    # a leave is done at once, but not acknowledged until it is stored
    leaver = conns[1].player_id
    await room.handle(conns[1], 3, "cmd", {"type": "leave"})
    assert replies(conns[1], 3)[0]["error"]["code"] == "storage_error"
    records.down = False
    await room.save()  # the next save carries the change that was not stored
    assert records.saves == saved + 1
    (stored, _game), *_ = [x for x in await records.live_rooms() if x[0].code == room.code]
    assert [p.is_bot for p in stored.players if p.player_id == leaver] == [True]
    await room.shutdown()


async def test_an_action_is_logged_before_anyone_hears_of_it() -> None:
    recorder = Recorder()
    records = WatchingRecords(recorder)
    room = new_room(TINY, options={"bidding": False}, records=records)
    ann, _bob = await seat_people(room, 2, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    frames_before = len(recorder.frames)
    card = ann.latest_view["game"]["hand"][0]  # type: ignore[index]
    await room.handle(ann, 2, "action", {"type": "play", "card": card})
    assert records.at_append == [frames_before]  # nothing was pushed before the append
    assert len(recorder.frames) > frames_before
    await room.shutdown()


async def test_a_storage_failure_refuses_the_move_and_changes_nothing() -> None:
    records = FlakyRecords()
    room = new_room(TINY, options={"bidding": False}, records=records)
    recorder = Recorder()
    ann, _bob = await seat_people(room, 2, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    state, v = room.state, room.v
    records.down = True
    card = ann.latest_view["game"]["hand"][0]  # type: ignore[index]
    await room.handle(ann, 2, "action", {"type": "play", "card": card})
    (reply,) = replies(ann, 2)
    assert reply["error"]["code"] == "storage_error"
    assert room.state is state and room.v == v and room.seq == 0
    records.down = False
    await room.handle(ann, 3, "action", {"type": "play", "card": card})
    assert replies(ann, 3)[0]["ok"] is True and room.seq == 1
    await room.shutdown()


async def test_recovery_replays_the_log_and_knows_the_tokens() -> None:
    from app.rooms.manager import RoomManager

    records = MemoryRecords()
    games = {"tiny": TINY}
    first = RoomManager(records, games, seeded("tests/rooms/test_room.py"))
    room, ann_p, ann_token = await first.create("tiny", {"bidding": False}, "Ann", {"bot_delay": 0})
    bob_p, bob_token = await room.join("Bob")
    recorder = Recorder()
    ann = await attach(room, ann_p, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    for i in range(3):
        seat = next(iter(room.to_act))
        action = TINY.legal_actions(room.state, seat)[0]
        await room.play(seat, action)
        assert room.seq == i + 1
    hands = room.state.hands
    await first.shutdown()

    second = RoomManager(records, games, seeded("tests/rooms/test_room.py"))
    assert await second.recover() == 1
    assert second.get(room.code) is None, "rooms are rebuilt when first needed"
    again = await second.find(room.code.lower())
    assert again is not None and again.status == "playing"
    assert again.state == room.state and again.seq == 3
    assert again.authenticate(bob_token) is not None
    assert again.authenticate(ann_token).player_id == ann_p.player_id  # type: ignore[union-attr]
    assert again.authenticate("forged") is None
    bob = await attach(again, again.players[bob_p.player_id], Recorder())
    assert bob.latest_view["game"]["hand"] == list(hands[1])  # type: ignore[index]
    await second.shutdown()


async def test_bots_only_games_finish_on_their_own_and_replay_from_the_seed() -> None:
    logs = []
    for _ in range(2):
        records = MemoryRecords()
        # the same code: the harness deals a room's games from TEST_SEED and its code
        room = new_room(TINY, settings={"posso_window": 15}, records=records, code="BOTS00")
        host, _ = await room.join("Host", spectator=True)
        conn = await attach(room, host, Recorder())
        for _ in range(3):
            await room.handle(conn, 1, "cmd", {"type": "add_bot"})
        await room.handle(conn, 2, "cmd", {"type": "start"})
        for _ in range(2000):
            if room.status == "finished":
                break
            await asyncio.sleep(0)
        assert room.status == "finished"
        (game,) = records.games.values()
        logs.append(game.actions)
        await room.shutdown()
    assert logs[0] == logs[1]  # same seed, same bots' choices


async def test_rooms_play_side_by_side() -> None:
    rooms: list[Room] = []
    for k in range(6):
        room = new_room(TINY, settings={"posso_window": 15}, code=f"SIDE0{k}")
        host, _ = await room.join("Host", spectator=True)
        conn = await attach(room, host, Recorder())
        for _ in range(4):
            await room.handle(conn, 1, "cmd", {"type": "add_bot"})
        await room.handle(conn, 2, "cmd", {"type": "start"})
        rooms.append(room)
    for _ in range(5000):
        if all(r.status == "finished" for r in rooms):
            break
        await asyncio.sleep(0)
    assert all(r.status == "finished" for r in rooms)
    for r in rooms:
        await r.shutdown()


async def test_resume_replays_only_what_was_addressed_to_that_seat() -> None:
    room = new_room(TINY, options={"bidding": False})
    recorder = Recorder()
    ann, bob = await seat_people(room, 2, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    await room.disconnect(bob)
    since = room.v
    for i in range(4):  # both seats move while Bob is away
        seat = next(iter(room.to_act))
        await room.play(seat, TINY.legal_actions(room.state, seat)[0])
        assert room.seq == i + 1
    back = RecordingConnection(room, Recorder(), FakeSocket())
    back.player_id = bob.player_id
    await room.connect(back, Resume(room.delivery.incarnation, since))
    msgs = [f.msg for f in back.recorder.frames]
    events = [m for m in msgs if "event" in m]
    drew = [m["event"] for m in events if m["event"]["type"] == "drew" and "card" in m["event"]]
    bob_hand = set(room.state.hands[1]) | {c for s, c in room.state.pile if s == 1}
    assert drew and all(e["card"] in bob_hand for e in drew)  # his own draws only
    assert len([e for e in events if e["event"]["type"] == "played"]) == 4
    assert "view" in msgs[-1] and all(m["v"] > since for m in msgs)
    assert [m["v"] for m in events] == sorted(m["v"] for m in events)
    await room.shutdown()


async def test_history_is_bounded() -> None:
    room = new_room(TINY)
    (ann,) = await seat_people(room, 1, Recorder())
    # chat makes a change each time; lift Ann's chat limit (tested on its own)
    room.members.chatter[ann.player_id] = TokenBucket(1e9, 1e9)
    for i in range(HISTORY_MAX + 10):
        await room.handle(ann, i, "cmd", {"type": "chat", "text": "x"})
    assert len(room.delivery.history) == HISTORY_MAX and room.delivery.history_floor > 0
    # a client further behind than the history gets just a full view
    late = RecordingConnection(room, Recorder(), FakeSocket())
    late.player_id = ann.player_id
    await room.connect(late, Resume(room.delivery.incarnation, 1))
    assert [("view" in f.msg) for f in late.recorder.frames] == [True]
    await room.shutdown()


async def test_hand_ended_events_become_score_rows() -> None:
    """A public `hand_ended` event (Posso) is stored as a score-sheet row."""

    class Scored(type(TINY)):  # type: ignore[misc]
        def apply(self, state: Any, seat: int | None, action: Any) -> Any:
            new, events = super().apply(state, seat, action)
            if new.phase == "over":
                events.append({"type": "hand_ended", "to": None, "hand": 1, "row": {"x": 1}})
            return new, events

    records = MemoryRecords()
    room = new_room(Scored(), options={"bidding": False}, records=records)
    conns = await seat_people(room, 2, Recorder())
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    await drive(room, conns, random.Random(2))
    await settle()
    (gid,) = records.games
    assert records.score_rows == {gid: {1: {"x": 1}}}
    assert records.games[gid].result is not None
    await room.shutdown()


def test_real_bots_are_wired_for_registered_games() -> None:
    from app.bots import BOTS, RandomBot, bot_for

    assert isinstance(bot_for("no such game"), RandomBot)
    for name in GAMES:
        if name in BOTS:
            assert bot_for(name) is BOTS[name]


@pytest.mark.parametrize(
    ("name", "bots", "options"),
    [("bigtwo", 4, {}), ("possum", 3, {}), ("possession", 3, {}), ("posso", 3, {"start_hand": 10})],
)
async def test_real_games_of_bots_finish_on_their_own(
    name: str, bots: int, options: dict[str, Any]
) -> None:
    if name not in GAMES:
        pytest.skip(f"{name} is not registered yet")
    game = GAMES[name]
    records = MemoryRecords()
    timers = {"posso_window": 0, "posso_answer": 0, "cut": 0}
    room = new_room(game, options=options, settings=timers, records=records, cls=Room)
    host, _ = await room.join("Host", spectator=True)
    conn = await attach(room, host, Recorder())
    for _ in range(bots):
        await room.handle(conn, 1, "cmd", {"type": "add_bot"})
    await room.handle(conn, 2, "cmd", {"type": "start"})
    for _ in range(100_000):
        if room.status == "finished":
            break
        await asyncio.sleep(0)
    assert room.status == "finished"
    (rec,) = records.games.values()
    assert rec.result == game.result(room.state) and rec.actions
    # the spectator followed along and saw the end
    assert conn.latest_view is not None and conn.latest_view["game"]["over"] is True
    await room.shutdown()


async def test_a_finished_games_result_keeps_the_names_its_players_had() -> None:
    """Seen at a table: after the host removed a bot between games, the
    result read "1st Seat 3" with an "away" dot.  A result is history."""
    room = new_room(TINY, options={"hand": 1}, settings={"posso_window": 0}, code="NAMES1")
    host, _ = await room.join("Host")
    conn = await attach(room, host, Recorder())
    for _ in range(2):
        await room.handle(conn, 1, "cmd", {"type": "add_bot"})
    await room.handle(conn, 2, "cmd", {"type": "start"})
    for _ in range(2000):
        if room.status == "finished":
            break
        if room.to_act == {0} and conn.latest_view and conn.latest_view.get("legal"):
            await room.handle(conn, 3, "action", conn.latest_view["legal"][0])
        await asyncio.sleep(0)
    assert room.status == "finished"
    before = room.room_public()["result_names"]
    assert before == ["Host", "Bot 2", "Bot 3"]  # bots are named by their seats, from 1
    await room.handle(conn, 4, "cmd", {"type": "remove_bot", "seat": 2})
    assert room.members.seats[2] is None
    assert room.room_public()["result_names"] == before
    await room.shutdown()


async def test_a_new_tab_in_a_long_game_is_not_dropped_for_its_story() -> None:
    """The simulator's seed 217: a tab opened late in a long game was sent the
    game's whole story at once, more than a socket may queue, and was dropped
    as too slow (and again at every reconnect).  Now it gets its view alone."""
    recorder = Recorder()
    room = new_room(TINY, options={"bidding": False})
    ann, _bob = await seat_people(room, 2, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    for i in range(HISTORY_MAX):  # a long evening's chat, every line kept for resuming
        room.change([{"type": "chat", "to": None, "seat": 0, "name": "P0", "text": f"{i}"}] * 3)
    await settle()
    late = await attach(room, room.players[ann.player_id], recorder)
    await settle()
    assert not late.dead and late.latest_view is not None
    await room.shutdown()
