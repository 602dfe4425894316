"""A person stays themselves: a seat link moves a seat, never a person; the
grace is the person's, fixed when they went; removal sticks (docs/security.md).

Each test attacks as someone at the table would, and checks the refusal
changed nothing."""

from __future__ import annotations

import asyncio
import copy

import pytest

from app.rooms.membership import SEAT_LINK_FLOOR
from app.rooms.tokens import token_hash
from tests.rooms.harness import Recorder, attach, new_room, seat_people
from tests.rooms.test_presence import replies
from tests.rooms.tinygame import TINY


def _stored(room: object) -> object:
    return copy.deepcopy(room.members.snapshot())  # type: ignore[attr-defined]


async def test_a_host_who_shortens_the_grace_after_a_drop_cannot_hand_the_seat_away() -> None:
    room = new_room(TINY, settings={"disconnect_grace": 60, "auto_bot": True})
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    await room.disconnect(bob)
    await room.handle(ann, 2, "cmd", {"type": "set_settings", "settings": {"disconnect_grace": 0}})
    assert replies(ann, 2)[0].get("ok") is True
    before = _stored(room)
    await room.handle(ann, 3, "cmd", {"type": "seat_link", "seat": 1})
    (refused,) = replies(ann, 3)
    assert refused["error"]["code"] == "too_early"  # type: ignore[index]
    assert not room.members.claims and _stored(room) == before
    # Bob's grace is still the minute he had when he went: no bot took his seat
    view = ann.latest_view  # type: ignore[attr-defined]
    seat = view["room"]["seats"][1]
    assert not seat["auto"] and seat["grace_ends_ms"] - seat["away_since_ms"] == 60_000
    # a later drop gets the new grace
    bob2 = await attach(room, room.players[bob.player_id], Recorder())
    await room.disconnect(bob2)
    assert room.members.graces[bob.player_id] == 0
    await room.shutdown()


async def test_no_seat_link_before_the_floor_whatever_the_grace() -> None:
    room = new_room(TINY, settings={"disconnect_grace": 0})
    ann, bob = await seat_people(room, 2)
    await room.disconnect(bob)
    await room.handle(ann, 1, "cmd", {"type": "seat_link", "seat": 1})
    assert replies(ann, 1)[0]["error"]["code"] == "too_early"  # type: ignore[index]
    assert not room.members.claims
    room.members.away_since[bob.player_id] -= SEAT_LINK_FLOOR  # the floor has passed
    await room.handle(ann, 2, "cmd", {"type": "seat_link", "seat": 1})
    assert replies(ann, 2)[0].get("ok") is True
    await room.shutdown()


@pytest.mark.usefixtures("no_link_floor")
async def test_a_seat_link_claimer_cannot_move_the_person() -> None:
    """The identity-theft chain: a stranger claims Bob's seat with a seat link
    and asks for a move link, to become Bob everywhere.  Refused, and nothing
    changes; Bob himself taking the seat back ends the loan."""
    room = new_room(TINY, settings={"disconnect_grace": 0})
    ann, bob = await seat_people(room, 2)
    bob_rec = room.players[bob.player_id]
    bob_rec.guest_id = "g-bob"
    await room.disconnect(bob)
    await room.handle(ann, 1, "cmd", {"type": "seat_link", "seat": 1})
    claim = replies(ann, 1)[0]["data"]["claim"]  # type: ignore[index]
    person, _, own = await room.claim(token_hash(claim), guest_id="g-stranger")
    assert person is bob_rec and not own and person.lent
    assert person.guest_id == "g-bob", "nothing of the claimer's is written"
    stranger = await attach(room, person, Recorder())
    before = _stored(room)
    await room.handle(stranger, 2, "cmd", {"type": "move_link"})
    (refused,) = replies(stranger, 2)
    assert refused["error"]["code"] == "not_yours"  # type: ignore[index]
    assert not room.members.claims and _stored(room) == before
    assert room.members.snapshot().players[1].lent, "saved as lent"
    # Bob, on his own browser, gets the seat back with a new seat link
    await room.disconnect(stranger)
    await room.handle(ann, 3, "cmd", {"type": "seat_link", "seat": 1})
    again = replies(ann, 3)[0]["data"]["claim"]  # type: ignore[index]
    person, _, _ = await room.claim(token_hash(again), guest_id="g-bob")
    assert not person.lent
    bob3 = await attach(room, person, Recorder())
    await room.handle(bob3, 4, "cmd", {"type": "move_link"})
    assert replies(bob3, 4)[0].get("ok") is True
    await room.shutdown()


async def test_a_removed_spectator_stays_out_until_the_host_lets_them_in() -> None:
    room = new_room(TINY)
    (ann,) = await seat_people(room, 1)
    wat, _ = await room.join("Wat", spectator=True, guest_id="g-wat", account_id=7)
    await attach(room, wat, Recorder())
    await room.handle(ann, 1, "cmd", {"type": "kick", "player": wat.player_id})
    assert replies(ann, 1)[0].get("ok") is True
    before = _stored(room)
    for kw in ({"guest_id": "g-wat"}, {"account_id": 7}, {"guest_id": "g-wat", "account_id": 7}):
        with pytest.raises(Exception, match="removed you") as err:
            await room.join("Wat again", spectator=True, **kw)  # type: ignore[arg-type]
        assert err.value.code == "removed"  # type: ignore[attr-defined]
    assert _stored(room) == before
    removed = ann.latest_view["room"]["removed"]  # type: ignore[attr-defined]
    assert removed == [{"player": wat.player_id, "name": "Wat"}]
    # another browser is another browser: removal binds a browser and an account
    other, _ = await room.join("Someone", spectator=True, guest_id="g-other")
    assert other.name == "Someone"
    # only the host lets people back
    some = await attach(room, other, Recorder())
    await room.handle(some, 2, "cmd", {"type": "let_in", "player": wat.player_id})
    assert replies(some, 2)[0]["error"]["code"] == "not_host"  # type: ignore[index]
    await room.handle(ann, 3, "cmd", {"type": "let_in", "player": wat.player_id})
    assert replies(ann, 3)[0].get("ok") is True
    back, _ = await room.join("Wat", spectator=True, guest_id="g-wat")
    assert back.name == "Wat" and not room.record.removed
    await room.shutdown()


async def test_a_locked_room_lets_nobody_new_in() -> None:
    room = new_room(TINY)
    (ann,) = await seat_people(room, 1)
    await room.handle(ann, 1, "cmd", {"type": "set_settings", "settings": {"locked": True}})
    before = _stored(room)
    with pytest.raises(Exception, match="locked") as err:
        await room.join("New", guest_id="g-new")
    assert err.value.code == "locked"  # type: ignore[attr-defined]
    assert _stored(room) == before
    await room.shutdown()


async def test_a_turn_timer_set_mid_turn_counts_from_the_change() -> None:
    """A host who sets a 5 s turn timer while a friend has thought for a
    minute gives them 5 s from now, not a timeout at once."""
    room = new_room(TINY, options={"bidding": False})
    ann, _bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    assert room.timers.get("turn") is None
    room.table.changed_at -= 60  # the turn began a minute ago
    await room.handle(ann, 2, "cmd", {"type": "set_settings", "settings": {"turn_timer": 5}})
    turn = room.timers.get("turn")
    assert turn is not None and turn.deadline >= room.clock() + 4.9
    await room.shutdown()


async def test_a_running_wait_keeps_its_deadline_when_the_host_changes_its_setting() -> None:
    room = new_room(TINY, settings={"posso_window": 8})
    ann, _bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    window = room.timers.get("game")
    assert window is not None and window.kind == "posso_window"
    await room.handle(ann, 2, "cmd", {"type": "set_settings", "settings": {"posso_window": 1}})
    assert room.timers.get("game") is window, "the running window goes on as it was"
    await room.shutdown()


async def test_auto_bot_turned_on_mid_game_takes_a_seat_past_its_grace() -> None:
    room = new_room(
        TINY, settings={"disconnect_grace": 1, "auto_bot": False}, options={"bidding": False}
    )
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    await room.disconnect(bob)
    room.members.away_since[bob.player_id] -= 5  # long past his grace
    room.reschedule()
    await asyncio.sleep(0.05)
    assert 1 not in room.table.auto, "auto_bot off: nobody takes over"
    await room.handle(ann, 2, "cmd", {"type": "set_settings", "settings": {"auto_bot": True}})
    await asyncio.sleep(0.05)
    assert 1 in room.table.auto
    await room.shutdown()
