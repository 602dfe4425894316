"""Telling someone away that it is their turn: what a nudge is and says.

A room decides who is due a nudge (`TurnNudges.nudge_turns`, after each change): a person whose seat
is to act, who has no socket open in the room, whose seat no bot plays, in a
wait the game does not close by itself, and who has not been nudged in this
turn.  It hands a `Nudge` to whatever the manager wired in - in the server,
`Nudges.send` (app/rooms/webpush.py), which only queues it: a room never waits
on a push service.

The message says which game and whose table, never a card: its text is made
from the game's title and the host's name only (`nudge_text`).  This module
stays small (the rooms import it); the sender and its libraries live in
webpush.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from app.rooms.bot_driver import BotDriver
from app.rooms.delivery import Delivery
from app.rooms.membership import Membership
from app.rooms.table import Table


@dataclass(frozen=True)
class Nudge:
    #: the room's code: the notification opens /r/{room}
    room: str
    guest_id: str | None
    account_id: int | None
    #: what the notification says (`nudge_text`)
    text: str
    #: asked at send time: still this person's turn, and still nobody there
    still_due: Callable[[], bool] = field(default=lambda: True)


def nudge_text(game_title: str, host_name: str | None, *, is_host: bool) -> str:
    """ "Your turn in Big Two at Ann's table": the game and whose table, and
    nothing of the game's state."""
    if is_host:
        return f"Your turn in {game_title} at your table"
    if host_name:
        return f"Your turn in {game_title} at {host_name}'s table"
    return f"Your turn in {game_title}"


def payload(nudge: Nudge) -> bytes:
    """The notification the service worker shows (static/sw.js)."""
    return orjson.dumps(
        {
            "title": "Card room",
            "body": nudge.text,
            "url": f"/r/{nudge.room}",
            "tag": f"turn:{nudge.room}",
        }
    )


class TurnNudges:
    """One room's turns and who has been nudged in each: a turn starts when a
    seat enters `to_act` and ends when it leaves it.  The room's parts it reads
    are fixed for the room's life; `closed` asks the room."""

    def __init__(
        self,
        code: str,
        table: Table,
        members: Membership,
        delivery: Delivery,
        bots: BotDriver,
        closed: Callable[[], bool],
    ) -> None:
        self.code = code
        self.table = table
        self.members = members
        self.delivery = delivery
        self.bots = bots
        self._closed = closed
        #: per seat to act: its turn's number and whether that turn has had its one nudge
        self._turns: dict[int, tuple[int, bool]] = {}
        self._turn_count = 0

    @property
    def closed(self) -> bool:
        return self._closed()

    def nudge_turns(self, nudge: Callable[[Nudge], None]) -> None:
        """After every change: a seat that is to act, whose person is not
        here, gets one nudge in that turn (app/rooms/nudges.py).  A turn
        starts when the seat enters `to_act` and ends when it leaves it; the
        person leaving in the middle of their turn is nudged then.  Runs on
        every change, so the usual case - the seat's person is here, or was
        nudged already - costs a few lookups."""
        turns, to_act = self._turns, self.table.to_act  # empty unless playing
        if not to_act or self.closed:
            turns.clear()
            return
        if len(turns) != len(to_act) or not to_act.issuperset(turns):
            for seat in [s for s in turns if s not in to_act]:
                del turns[seat]
        here, seats = self.delivery.conns, self.table.game_seats
        for seat in to_act:
            turn = turns.get(seat)
            if turn is None:
                self._turn_count += 1
                turn = turns[seat] = (self._turn_count, False)
            elif turn[1]:
                continue
            if seats[seat] in here:  # the usual case: its person is here
                continue
            if self._away_in_turn(seat):
                turns[seat] = (turn[0], True)
                nudge(self._nudge_for(seat, turn[0]))

    def _nudge_for(self, seat: int, number: int) -> Nudge:
        table, members = self.table, self.members
        player = members.players[table.game_seats[seat]]
        host = members.host
        text = nudge_text(
            table.game.title,
            members.names.get(host) if host else None,
            is_host=host == player.player_id,
        )

        def still_due() -> bool:
            return self._turns.get(seat, (0, True))[0] == number and self._away_in_turn(seat)

        return Nudge(self.code, player.guest_id, player.account_id, text, still_due)

    def _away_in_turn(self, seat: int) -> bool:
        """The seat is to act and its person plays it but is not here: no
        socket open in the room, and no bot standing in.  A wait the game
        closes by itself (a game timer: Posso's window, an answer, the cut)
        goes on without them, so it wakes nobody."""
        table = self.table
        if seat not in table.to_act or self.closed:
            return False
        pid = table.game_seats[seat]
        if pid in self.delivery.conns:
            return False
        player = self.members.players.get(pid)
        if player is None or player.is_bot or not (player.guest_id or player.account_id):
            return False
        return not self.bots.bot_drives(seat) and table.game.timer(table.state) is None
