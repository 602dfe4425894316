"""Telling someone away that it is their turn: what a nudge is and says.

A room decides who is due a nudge (`Room._nudge_turns`): a person whose seat
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
