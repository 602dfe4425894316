"""Possum's options and state.

The state is a frozen dataclass of tuples; `apply` builds the next one with
`dataclasses.replace`, sharing what did not change.  The draw pile keeps its
next card at index 0, the discard pile its top card last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from app.games.base import GameOptions

StrictFlag = Annotated[bool, Field(strict=True)]


class PossumOptions(GameOptions):
    #: the first dealer (the seat on its left plays first); None: chosen by the seed
    first_dealer: Annotated[int, Field(strict=True, ge=0, le=5)] | None = None
    #: variation 1: products of exactly two cards (2b, 3b) are plays too
    multiply: StrictFlag = False
    #: variation 2: any number of cards equal to the top; sums of two or three
    multi: StrictFlag = False
    #: for younger children: J, Q and K are taken out of the deck
    no_face_cards: StrictFlag = False
    #: draw at most one card a turn instead of two
    single_draw: StrictFlag = False


@dataclass(frozen=True)
class PossumState:
    options: PossumOptions
    seed: int
    dealer: int
    hands: tuple[tuple[str, ...], ...]
    #: the discard pile, bottom first: pile[-1] is the top every play answers
    pile: tuple[str, ...]
    #: the draw pile, next card first
    draw: tuple[str, ...]
    #: whose turn; None once the game is over
    turn: int | None
    draws_taken: int
    reshuffles: int
    winner: int | None
    stalled: bool

    @property
    def over(self) -> bool:
        return self.turn is None

    @property
    def draw_limit(self) -> int:
        return 1 if self.options.single_draw else 2
