"""Quieter Posso: each person's own choice not to be asked about every Posso
(docs/games/posso.md, "Quieter Posso").

Two switches, per person, held here and told to that person only (their view's
`you.quiet`): "don't ask me about Possos this hand" and "only ask me when the
card could help me" (`app.games.posso.helps`).  A person not asked about a
window's card passes: the room passes for them through the engine, like any
move, as soon as the window waits only on people not asked, so a window closes
once everyone asked has answered (docs/games/posso.md, "Quieter Posso": quiet
settings pass for a person at once) and a table where nobody wants to be asked
moves at bot speed.  The price, said where the switches are set: a pass that
comes at once tells the table the person was not asked (and, under "only when
it helps", that the card cannot help them) - as a quick "no" does at a real
table.  The switches themselves are told to their person only.

The switches live in memory with the room: the browser keeps "only when it
helps" for this room (per room: another room starts asking again) and sends
it again whenever it connects, and "this hand" ends with the hand anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.games.posso.helps import window_helps
from app.games.posso.model import PossoState
from app.rooms.errors import RoomError


@dataclass
class Quiet:
    #: (game number in the room, hand number) of "don't ask me this hand"
    skip: tuple[int, int] | None = None
    #: "only ask me when the card could help me"
    helpful: bool = False


class QuietPosso:
    def __init__(self) -> None:
        self._prefs: dict[str, Quiet] = {}

    def set(self, pid: str, cmd: dict[str, Any], game_no: int, state: Any) -> None:
        """The `posso_quiet` command: `hand` (this hand), `helpful`, either or both."""
        extra = cmd.keys() - {"type", "hand", "helpful"}
        if extra:
            fields = ", ".join(sorted(extra))
            raise RoomError("bad_command", f"posso_quiet takes no field(s) {fields}")
        for key in ("hand", "helpful"):
            if key in cmd and not isinstance(cmd[key], bool):
                raise RoomError("bad_command", f"{key} must be true or false")
        hand, helpful = cmd.get("hand"), cmd.get("helpful")
        if hand is None and helpful is None:
            raise RoomError("bad_command", "posso_quiet needs hand or helpful (true or false)")
        if hand is not None and not isinstance(state, PossoState):
            raise RoomError("not_playing", "there is no Posso hand being played")
        pref = self._prefs.setdefault(pid, Quiet())
        if hand is not None:
            assert isinstance(state, PossoState)
            pref.skip = (game_no, state.hand_no) if hand else None
        if helpful is not None:
            pref.helpful = helpful
        if pref == Quiet():  # both off: as if never set
            del self._prefs[pid]

    @property
    def anyone(self) -> bool:
        """Has anyone in the room set a switch?  (Most rooms: no, and every
        move asks, so the answer must cost nothing.)"""
        return bool(self._prefs)

    def forget(self, pid: str) -> None:
        self._prefs.pop(pid, None)

    def you(self, pid: str, game_no: int) -> dict[str, Any]:
        """What the person's own view says of their switches: the hand they
        skip (in the game being played), and "only when it helps"."""
        pref = self._prefs.get(pid) or Quiet()
        skip = pref.skip
        return {"hand": skip[1] if skip and skip[0] == game_no else None, "helpful": pref.helpful}

    def asked(self, pid: str, game_no: int, state: Any, seat: int) -> bool:
        """Is the person in `seat` asked about the card in the open window?"""
        pref = self._prefs.get(pid)
        if pref is None or not isinstance(state, PossoState):
            return True
        if pref.skip == (game_no, state.hand_no):
            return False
        return not pref.helpful or window_helps(state, seat) is not False
