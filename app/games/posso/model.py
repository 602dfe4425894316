"""The state of a game of Posso.

Positions go round the table clockwise.  With three or more players a position
is a seat; with two, the table holds four positions (seat 0, a phantom, seat 1,
a phantom) so the phantoms take turns like anyone else.  `ring[p]` is the seat
at position p, or None for a phantom.

Stack and pile keep their top at the end of the list, so taking a card is a
pop.  `copy_state` copies every container an action may change; melds are
frozen and sheet rows are never changed once written, so both are shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.games.posso.melds import Meld
from app.games.posso.options import PossoOptions

CUT = "cut"
WINDOW = "posso_window"
ANSWER = "posso_answer"
DRAW = "draw"
PLAY = "play"
OVER = "over"


@dataclass
class PossoState:
    seats: int
    options: PossoOptions
    seed: int
    decks: int
    ring: tuple[int | None, ...]
    hand_no: int
    dealer: int  # a seat
    phase: str
    turn: int  # a position: whose turn it is, or who is next during a Posso window
    hands: list[list[str]]  # per seat
    markers: list[list[str]]  # per position: a phantom's face-down card
    stack: list[str]  # top last
    pile: list[str]  # top last
    melds: list[Meld] = field(default_factory=list)
    meld_counter: int = 0
    down: list[bool] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    sheet: list[dict[str, Any]] = field(default_factory=list)
    possos: list[int] = field(default_factory=list)  # Possos taken this hand, per seat
    cut: dict[str, Any] | None = None  # this hand's cut, once made
    # the Posso window after a discard (or the upturn)
    eligible: tuple[int, ...] = ()
    answered: tuple[int, ...] = ()
    callers: tuple[int, ...] = ()
    caller: int | None = None  # who won priority and awaits the next player's answer
    dead: bool = False  # the pile top may not be drawn (option dead_card)
    reshuffles: int = 0
    last_hand: dict[str, Any] | None = None  # the hands shown at the end of the last hand

    def seat_at(self, pos: int) -> int | None:
        return self.ring[pos]

    def pos_of(self, seat: int) -> int:
        return self.ring.index(seat)

    @property
    def turn_seat(self) -> int:
        seat = self.ring[self.turn]
        assert seat is not None, "a phantom's turn never waits"
        return seat


def copy_state(s: PossoState) -> PossoState:
    """A copy whose containers can change without touching `s` (faster than
    dataclasses.replace, which re-runs __init__ and its checks)."""
    new = object.__new__(PossoState)
    new.__dict__.update(s.__dict__)
    new.hands = [list(h) for h in s.hands]
    new.markers = [list(m) for m in s.markers]
    new.stack = list(s.stack)
    new.pile = list(s.pile)
    new.melds = list(s.melds)
    new.down = list(s.down)
    new.totals = list(s.totals)
    new.sheet = list(s.sheet)
    new.possos = list(s.possos)
    return new
