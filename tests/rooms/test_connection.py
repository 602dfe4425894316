"""A slow, stuck or broken socket never holds up the room or anyone else."""

from __future__ import annotations

import asyncio
import random

import pytest

from app.rooms.connection import Connection
from tests.rooms.harness import FakeSocket, Recorder, attach, drive, new_room, seat_people, settle
from tests.rooms.tinygame import TINY

pytestmark = pytest.mark.timeout(60)


class StuckSocket:
    """A peer that stopped reading: every send waits forever."""

    def __init__(self) -> None:
        self.sends = 0
        self.never = asyncio.Event()

    async def send_text(self, text: str) -> None:
        self.sends += 1
        await self.never.wait()

    async def close(self, code: int, reason: str) -> None:
        await self.never.wait()


class BrokenSocket:
    async def send_text(self, text: str) -> None:
        raise RuntimeError("Cannot call send once a close message has been sent")

    async def close(self, code: int, reason: str) -> None:
        raise RuntimeError("closed")


async def test_a_stuck_socket_is_dropped_and_the_room_plays_on() -> None:
    room = new_room(TINY, settings={"posso_window": 0})
    recorder = Recorder()
    conns = await seat_people(room, 2, recorder)
    player, _ = await room.join("Stuck", spectator=True)
    stuck = StuckSocket()
    gone: list[bool] = []
    slow = Connection(stuck.send_text, stuck.close, max_queue=8, on_dead=lambda: gone.append(True))
    slow.player_id = player.player_id
    await room.connect(slow)
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    await drive(room, conns, random.Random(1))
    await settle()
    assert room.status == "finished"
    assert slow.dead and gone == [True]
    assert stuck.sends == 1  # it took the first frame and never returned
    # the people at the table got every view up to the end
    for c in conns:
        assert c.latest_view is not None and c.latest_view["room"]["status"] == "finished"
    await room.disconnect(slow)
    await slow.stop()
    await room.shutdown()


async def test_a_failing_send_kills_only_that_connection() -> None:
    room = new_room(TINY)
    recorder = Recorder()
    (ann,) = await seat_people(room, 1, recorder)
    player, _ = await room.join("Bob")
    broken = BrokenSocket()
    gone: list[bool] = []
    conn = Connection(broken.send_text, broken.close, on_dead=lambda: gone.append(True))
    conn.player_id = player.player_id
    await room.connect(conn)
    await settle()
    assert conn.dead and gone == [True]
    await room.handle(ann, 1, "cmd", {"type": "chat", "text": "still here"})
    await settle()
    assert any(m.get("event", {}).get("text") == "still here" for m in ann.sock.sent)
    await room.shutdown()


async def test_close_sends_what_is_queued_first() -> None:
    sock = FakeSocket()
    conn = Connection(sock.send_text, sock.close)
    conn.push('{"v": 1}')
    conn.close(4403, "kicked")
    conn.push('{"v": 2}')  # after close: dropped
    await settle()
    assert sock.sent == [{"v": 1}] and sock.closed == (4403, "kicked")
    await conn.stop()


async def test_a_second_tab_gets_its_own_view() -> None:
    room = new_room(TINY)
    recorder = Recorder()
    (ann,) = await seat_people(room, 1, recorder)
    tab2 = await attach(room, room.players[ann.player_id], recorder)
    assert tab2.latest_view is not None and tab2.latest_view["you"]["seat"] == 0
    await room.shutdown()


async def test_a_change_pushed_together_leaves_as_one_frame() -> None:
    """The writer takes everything queued when it runs: a change's event and
    view cost one send on a batching socket, and nothing is sent by the room
    itself (it never waits on a socket)."""
    sock = FakeSocket()
    conn = Connection(sock.send_text, sock.close, batch=True)
    conn.push_all(['{"v": 1, "event": {}}', '{"v": 1, "view": {}}'])
    assert sock.sent == []
    await settle()
    assert sock.sent == [[{"v": 1, "event": {}}, {"v": 1, "view": {}}]]
    await conn.stop()


async def test_a_held_socket_gets_what_was_pushed_meanwhile_as_one_frame() -> None:
    sock = FakeSocket()
    conn = Connection(sock.send_text, sock.close, batch=True)
    conn.hold()
    conn.push('{"v": 2, "view": {}}')
    conn.push('{"re": 7, "ok": true, "v": 2}')
    await settle()
    assert sock.sent == []
    conn.release()
    await settle()
    assert sock.sent == [[{"v": 2, "view": {}}, {"re": 7, "ok": True, "v": 2}]]
    conn.release()  # nothing held: nothing more goes out
    await settle()
    assert len(sock.sent) == 1
    await conn.stop()


async def test_frames_pushed_while_a_send_waits_follow_it_in_order() -> None:
    """The first send parks (the peer is slow); what comes meanwhile is queued
    and goes out, in order and together, once it completes."""
    gate = asyncio.Event()
    sent: list[str] = []

    async def slow_send(text: str) -> None:
        sent.append(text)
        if len(sent) == 1:
            await gate.wait()

    conn = Connection(slow_send, FakeSocket().close, batch=True)
    conn.push('{"v": 1}')
    await settle()
    conn.push('{"v": 2}')
    conn.push('{"v": 3}')
    assert sent == ['{"v": 1}']
    gate.set()
    await settle()
    assert sent == ['{"v": 1}', '[{"v": 2},{"v": 3}]']
    await conn.stop()
