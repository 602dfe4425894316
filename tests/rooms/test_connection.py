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
    """The lane takes everything queued when it runs: a change's event and
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


async def test_one_task_sends_for_every_socket() -> None:
    """Frames for five sockets in one turn of the loop go out from one task
    (the outbox's lane), not one per socket: the lane ends once all is sent."""
    before = asyncio.all_tasks()
    socks = [FakeSocket() for _ in range(5)]
    conns = [Connection(s.send_text, s.close, batch=True) for s in socks]
    for i, conn in enumerate(conns):
        conn.push(f'{{"v": {i}}}')
    assert len(asyncio.all_tasks() - before) == 1
    await settle()
    assert [s.sent for s in socks] == [[{"v": i}] for i in range(5)]
    assert asyncio.all_tasks() - before == set()
    for conn in conns:
        await conn.stop()


class GatedSocket:
    """A peer that stops reading until `gate` opens; fails the test if two
    sends to it ever run at once (the lane and its own task both sending)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.sent: list[str] = []
        self.inflight = 0

    async def send_text(self, text: str) -> None:
        assert self.inflight == 0, "two sends to one socket at once"
        self.inflight += 1
        try:
            self.sent.append(text)
            await self.gate.wait()
        finally:
            self.inflight -= 1

    async def close(self, code: int, reason: str) -> None:
        pass


async def test_a_slow_peer_holds_up_the_others_for_one_turn_of_the_loop_at_most() -> None:
    """The slow peer is first in the lane's round and nothing else is pushed:
    the others still get their frames within a turn or two (the lane is left
    to the slow peer); the slow peer gets its own in order, one send at a
    time, and once it catches up the lane serves it again."""
    slow_sock = GatedSocket()
    slow = Connection(slow_sock.send_text, slow_sock.close, batch=True)
    socks = [FakeSocket() for _ in range(3)]
    fast = [Connection(s.send_text, s.close, batch=True) for s in socks]
    slow.push('{"v": 1}')
    for conn in fast:
        conn.push('{"v": 1}')
    await asyncio.sleep(0)  # the lane is in the slow send
    slow.push('{"v": 2}')  # queued behind it
    await settle()
    assert [s.sent for s in socks] == [[{"v": 1}]] * 3
    assert slow_sock.sent == ['{"v": 1}']
    for conn in fast:
        conn.push('{"v": 2}')
    slow.push('{"v": 3}')
    await settle()
    assert [s.sent for s in socks] == [[{"v": 1}, {"v": 2}]] * 3
    slow_sock.gate.set()
    await settle()
    assert slow_sock.sent == ['{"v": 1}', '[{"v": 2},{"v": 3}]']
    slow.push('{"v": 4}')
    await settle()
    assert slow_sock.sent[-1] == '{"v": 4}'
    for conn in [slow, *fast]:
        await conn.stop()


async def test_a_slow_peer_dropped_while_it_waits_leaves_no_task_behind() -> None:
    before = asyncio.all_tasks()
    stuck = StuckSocket()
    gone: list[bool] = []
    conn = Connection(stuck.send_text, stuck.close, max_queue=3, on_dead=lambda: gone.append(True))
    conn.push("1")
    await settle()  # its send never returns: the lane is left to it
    assert len(asyncio.all_tasks() - before) == 1
    for i in range(2, 6):
        conn.push(str(i))
    await settle()
    assert conn.dead and gone == [True] and stuck.sends == 1
    assert asyncio.all_tasks() - before == set()


async def _cancel_all_other_tasks() -> None:
    """What a crash in the simulator, or a server's shutdown, does."""
    others = asyncio.all_tasks() - {asyncio.current_task()}
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


async def test_sending_goes_on_after_every_task_was_cancelled() -> None:
    """The simulator found it: a lane cancelled before its first step never
    cleaned up after itself, and nothing was ever sent again on that loop."""
    first, second = FakeSocket(), FakeSocket()
    a = Connection(first.send_text, first.close)
    b = Connection(second.send_text, second.close)
    a.push('{"v": 1}')  # a lane is made, not yet run
    await _cancel_all_other_tasks()
    b.push('{"v": 2}')
    await settle()
    assert second.sent == [{"v": 2}]
    await a.stop()
    await b.stop()


async def test_a_slow_peer_whose_task_was_cancelled_is_sent_to_again() -> None:
    sock = GatedSocket()
    conn = Connection(sock.send_text, sock.close)
    conn.push("1")
    await settle()  # the lane is left to it
    await _cancel_all_other_tasks()
    sock.gate.set()
    conn.push("2")
    await settle()
    assert sock.sent == ["1", "2"]
    await conn.stop()
