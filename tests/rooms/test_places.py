"""Who holds a place, and on which device (app/rooms/places.py): a
signed-in person's own seat on another device, seat and move links, and the
host taking someone out."""

from __future__ import annotations

import asyncio
import time

import pytest

from app.rooms.tokens import token_hash
from tests.rooms.harness import Recorder, attach, events, new_room, replies, seat_people, settle
from tests.rooms.tinygame import TINY

pytestmark = pytest.mark.timeout(30)

GRACE = 0.05


async def test_a_signed_in_player_gets_their_own_seat_back_on_another_device() -> None:
    room = new_room(TINY)
    ann, _ = await seat_people(room, 2)
    bob, old_token = await room.join("Bob", account_id=7)
    recorder = Recorder()
    old = await attach(room, bob, recorder)
    # Bob opens the room on his phone, signed in as the same account
    again, token = await room.join("Bobby", account_id=7)
    assert again is bob and again.seat == 2 and token != old_token
    assert room.authenticate(old_token) is None, "the old device's token stops working"
    assert room.authenticate(token) is bob
    await settle()
    assert old.sock.closed == (4401, "your seat moved to another device")
    assert events(ann, "moved")[-1]["name"] == "Bob"
    # someone else signed in gets a place of their own
    cy, _ = await room.join("Cy", account_id=8)
    assert cy is not bob
    await room.shutdown()


@pytest.mark.usefixtures("no_link_floor")
async def test_a_seat_link_after_the_grace_is_announced_and_changes_nobody_elses_history() -> None:
    room = new_room(TINY, settings={"disconnect_grace": GRACE})
    ann, bob = await seat_people(room, 2)
    bob_rec = room.players[bob.player_id]
    bob_rec.guest_id, bob_rec.account_id = "g-bob", None
    old_token = room.members.reissue_token(bob_rec)
    await room.handle(ann, 1, "cmd", {"type": "seat_link", "seat": 1})
    (refused,) = replies(ann, 1)
    assert refused["error"]["code"] == "bad_seat", "Bob is still connected"  # type: ignore[index]
    await room.disconnect(bob)
    await asyncio.sleep(GRACE * 2)
    await room.handle(ann, 2, "cmd", {"type": "seat_link", "seat": 1})
    (ack,) = replies(ann, 2)
    claim = ack["data"]["claim"]  # type: ignore[index]
    assert ack["data"]["name"] == "P1"  # type: ignore[index]
    assert ack["data"]["expires_ms"] > time.time() * 1000  # type: ignore[index]
    made = events(ann, "link_made")[-1]
    assert (made["name"], made["by"], made["seat"]) == ("P1", "P0", 1)
    # Eve, on her own browser, opens the link
    player, token, own = await room.claim(token_hash(claim), guest_id="g-eve")
    assert not own, "a seat link someone else made"
    assert player.player_id == bob.player_id and player.seat == 1
    assert player.guest_id == "g-bob" and player.account_id is None, "nothing of Eve's is written"
    assert room.authenticate(token) is player
    moved = events(ann, "moved")[-1]
    assert (moved["name"], moved["by"]) == ("P1", "P0")
    with pytest.raises(Exception, match="not valid any more"):
        await room.claim(token_hash(claim))  # one use only
    # Bob's old device comes back and is told what happened, and by whom
    refusal = room.members.refusal(token_hash(old_token))
    assert refusal.code == "seat_moved"
    assert "P1's seat moved to a new device" in refusal.message and "P0" in refusal.message
    await room.shutdown()


@pytest.mark.usefixtures("no_link_floor")
async def test_a_person_has_one_pending_link_at_most() -> None:
    room = new_room(TINY, settings={"disconnect_grace": 0})
    ann, bob = await seat_people(room, 2)
    await room.disconnect(bob)
    for i in range(5):
        await room.handle(ann, 10 + i, "cmd", {"type": "seat_link", "seat": 1})
    first = replies(ann, 10)[0]["data"]["claim"]  # type: ignore[index]
    assert len(room.members.claims) == 1
    with pytest.raises(Exception, match="not valid any more"):
        await room.claim(token_hash(first))
    await room.shutdown()


async def test_a_move_link_moves_a_persons_own_place_to_their_new_device() -> None:
    room = new_room(TINY)
    ann, bob = await seat_people(room, 2)
    bob_rec = room.players[bob.player_id]
    old_token = room.members.reissue_token(bob_rec)
    await room.handle(bob, 1, "cmd", {"type": "move_link"})
    (ack,) = replies(bob, 1)
    claim = ack["data"]["claim"]  # type: ignore[index]
    player, token, own = await room.claim(token_hash(claim), guest_id="g-bob-phone")
    assert own
    assert player is bob_rec and player.seat == 1
    assert player.guest_id == "g-bob-phone", "the new device is the same person"
    assert room.authenticate(token) is player and room.authenticate(old_token) is None
    await settle()
    assert bob.sock.closed == (4401, "your seat moved to another device")
    assert "you moved your place" in room.members.refusal(token_hash(old_token)).message
    assert "by" not in events(ann, "moved")[-1]
    await room.shutdown()


async def test_the_host_removes_a_spectator() -> None:
    room = new_room(TINY)
    ann, bob, wat = await seat_people(room, 2, spectators=1)
    watcher = room.players[wat.player_id]
    await room.handle(bob, 1, "cmd", {"type": "kick", "player": watcher.player_id})
    assert replies(bob, 1)[0]["error"]["code"] == "not_host"  # type: ignore[index]
    view = ann.latest_view  # type: ignore[attr-defined]
    assert view["room"]["watchers"] == [{"player": watcher.player_id, "name": "P2"}]
    await room.handle(ann, 2, "cmd", {"type": "kick", "player": watcher.player_id})
    assert replies(ann, 2)[0].get("ok") is True
    await settle()
    assert watcher.player_id not in room.players and wat.sock.closed is not None
    assert events(ann, "kicked")[-1]["name"] == "P2"
    await room.handle(ann, 3, "cmd", {"type": "kick", "player": bob.player_id})
    assert replies(ann, 3)[0]["error"]["code"] == "bad_seat", "a player is named by seat"  # type: ignore[index]
    await room.shutdown()
