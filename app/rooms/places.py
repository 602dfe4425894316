"""Who holds a place in the room, and on which device: joining, taking a
place with a one-time link, a person's move to another device or another
room, and a person taken out.

`Places` is one room's.  It changes the people (`Membership`) under the
room's lock, closes the sockets a change ends (`Delivery`), and ends each
change in the room's own steps (`PlacesRoom`): saving its people - a change
is acknowledged only once it is stored - bringing its waits in line, and the
one `change` that tells everyone.  Who is away, and for how long, is
`Presence`'s; the idle clock is `Closing`'s.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from app.games.base import Event
from app.rooms.closing import Closing
from app.rooms.delivery import Delivery
from app.rooms.errors import RoomError, bad_claim
from app.rooms.events import CLOSE_MOVED, room_event
from app.rooms.membership import Membership
from app.rooms.presence import Presence
from app.rooms.quiet import QuietPosso
from app.rooms.settings import RoomSettings
from app.rooms.table import Table
from app.rooms.text import clean_name
from app.store.records import PlayerRecord


def owns(p: PlayerRecord, guest_id: str | None, account_id: int | None) -> bool:
    """Whether a browser with this guest identity, or signed in to this
    account, is `p`'s own."""
    if guest_id and p.guest_id == guest_id:
        return True
    return account_id is not None and p.account_id == account_id


def moves_as_guest(p: PlayerRecord) -> bool:
    """Whether `p`'s own move link moves a guest identity (a guest with a
    guest id; someone signed in simply signs in on the new device)."""
    return p.account_id is None and bool(p.guest_id)


class PlacesRoom(Protocol):
    """The room as its places see it (app/rooms/room.py's `Room` is one)."""

    lock: asyncio.Lock

    @property
    def closed(self) -> bool: ...

    @property
    def settings(self) -> RoomSettings: ...

    @property
    def stored(self) -> bool: ...

    async def save(self) -> None: ...

    def change(
        self, events: list[Event], *, with_view: bool = ..., room_changed: bool = ...
    ) -> None: ...

    def reschedule(self, *, presence: bool = ...) -> None: ...

    async def close(self) -> None: ...


class Places:
    def __init__(
        self,
        room: PlacesRoom,
        members: Membership,
        table: Table,
        delivery: Delivery,
        quiet: QuietPosso,
        presence: Presence,
        closing: Closing,
    ) -> None:
        self.room = room
        self.members = members
        self.table = table
        self.delivery = delivery
        self.quiet = quiet
        self.presence = presence
        self.closing = closing

    async def join(
        self,
        name: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
        spectator: bool = False,
        host: bool = False,
        token_hash: str | None = None,
    ) -> tuple[PlayerRecord, str]:
        """A new person in the room; returns their record and their secret token
        (or "" if the caller made it and passed `token_hash`).  Someone signed
        in who is already here gets their own place back instead, on this device."""
        name = clean_name(name)
        async with self.room.lock:
            if self.room.closed:
                raise RoomError("no_room", "this room has closed")
            members = self.members
            if account_id is not None:
                known = members.by_account(account_id)
                if known is not None:
                    known.lent = False  # the person themselves, on a device of theirs
                    return known, await self._move_device(known, guest_id, hashed=token_hash)
            waiting = members.waiting_for(guest_id)
            if waiting is not None:  # moved here from another room: their place
                waiting.lent = False
                return waiting, await self._move_device(waiting, None, hashed=token_hash)
            members.check_may_join(guest_id, account_id, self.room.settings.locked)
            seat = None if spectator or self.table.playing else members.free_seat()
            player, token = members.add_person(
                name,
                seat,
                guest_id=guest_id,
                account_id=account_id,
                hashed=token_hash,
                grace=self.room.settings.disconnect_grace,
            )
            host_before = members.host
            if host or members.host is None:
                members.host = player.player_id
            await self.room.save()
            if not self.room.stored:  # a join is acknowledged only once it is stored
                members.forget(player)
                members.host = host_before
                raise RoomError("storage_error", "the room cannot take anyone just now; try again")
            self.presence.schedule()
            self.room.change([room_event("joined", seat=seat, name=name)])
            return player, token

    async def claim(
        self,
        claim_hash: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
        token_hash: str | None = None,
    ) -> tuple[PlayerRecord, str, bool]:
        """Take a place with a one-time link (`seat_link`, `move_link`), named by
        the hash of its secret (the secret itself never leaves the route); the
        person, their new token, and whether it was their own move link.

        A seat link someone else made writes nothing of the claimer's onto the
        person's record, so each person's history holds what they played; and
        unless the claimer's browser is the person's own, the place is `lent`:
        it may not move the person, and the person's identity elsewhere may
        not follow its cards while the game runs (a seat link moves a seat,
        never a person).  A browser or account the host removed may not claim.  A
        guest's own move link leaves the record as it is too: the person
        moves, not only the place - the route makes the new browser act as
        the person's guest id everywhere (app/api/rooms.py).  A place held by an
        account (or with no guest id) takes the new browser's guest id, so
        that browser sees the game even while signed out."""
        async with self.room.lock:
            if not self.room.closed:
                self.members.check_not_removed(guest_id, account_id)
            found = None if self.room.closed else self.members.take_claim(claim_hash)
            if found is None:
                raise bad_claim()
            person, claim = found
            person.lent = not (claim.own or owns(person, guest_id, account_id))
            maker = self.members.names.get(claim.by, "someone")
            self.members.remember_replaced(person, maker, claim.own)
            token = await self._move_device(
                person,
                guest_id if claim.own and not moves_as_guest(person) else None,
                by=None if claim.own else maker,
                hashed=token_hash,
            )
            if not self.room.stored:  # the new token would not outlive a crash: not handed out
                raise RoomError("storage_error", "the link could not be used just now; ask again")
            return person, token, claim.own

    async def release_person(self, guest_id: str) -> int:
        """The guest `guest_id` moved to another browser with a move link made
        in another room: their place here leaves the old browser too (its
        token void, its sockets closed and told why), and waits for them to
        open the room on the new one (`join` finds it by their guest id).
        How many places were released."""
        async with self.room.lock:
            if self.room.closed:
                return 0
            held = [p for p in self.members.humans() if p.guest_id == guest_id and p.token_hash]
            for person in held:
                self.members.remember_replaced(person, person.name, True)
                self.members.void_token(person)
                self.delivery.close_person(
                    person.player_id, CLOSE_MOVED, "you moved to another device"
                )
                self.members.left(person.player_id, self.room.settings.disconnect_grace)
            if held:
                self.closing.mark_idle()
                await self.room.save()
                self.presence.schedule()
                self.room.change([room_event("moved", seat=p.seat, name=p.name) for p in held])
            return len(held)

    async def _move_device(
        self,
        person: PlayerRecord,
        guest_id: str | None,
        *,
        by: str | None = None,
        hashed: str | None = None,
    ) -> str:
        """`person` continues on another device: a new token, the old one void
        and its sockets closed, told why (`by`: who made the seat link)."""
        token = self.members.reissue_token(person, hashed)
        if guest_id is not None:
            person.guest_id = guest_id
        moved = (
            f"your seat moved to a new device with a seat link {by} made"
            if by is not None
            else "your seat moved to another device"
        )
        self.delivery.close_person(person.player_id, CLOSE_MOVED, moved)
        self.members.left(person.player_id, self.room.settings.disconnect_grace)
        self.closing.mark_idle()
        await self.room.save()
        self.presence.schedule()
        extra = {"by": by} if by is not None else {}
        self.room.change([room_event("moved", seat=person.seat, name=person.name, **extra)])
        return token

    async def remove_person(self, person: PlayerRecord, code: int, reason: str, what: str) -> None:
        """Take a person out: between games their seat frees; during a game a bot
        takes it over under their name.  Their token stops working at once."""
        members, table = self.members, self.table
        seat = person.seat
        if what == "kicked":
            members.remember_removed(person)
        members.void_token(person)
        self.quiet.forget(person.player_id)
        self.delivery.close_person(person.player_id, code, reason)
        self.closing.mark_idle()
        game_seat = table.seat_of(person.player_id)
        if game_seat is not None:
            person.is_bot = True
            members.arrived(person.player_id)  # a bot is never away
            table.auto.discard(game_seat)
            table.forced.discard(game_seat)
        else:
            members.forget(person)
        events = [room_event(what, seat=seat, name=person.name)]
        if members.host == person.player_id:
            heir = members.heir() or next(iter(members.humans()), None)
            members.host = heir.player_id if heir else None
            if heir is not None:
                events.append(room_event("host", seat=heir.seat, name=heir.name))
        if not members.humans():
            await self.room.close()
            return
        await self.room.save()
        self.room.reschedule()
        self.room.change(events)
