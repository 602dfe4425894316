"""Big Two's options and state.

The state is a named tuple of tuples: `apply` builds the next state from the
last one's parts, sharing every untouched part, which is both a cheap copy and
a guarantee that the old state cannot be mutated.  A named tuple rather than a
frozen dataclass because a move makes one: built from its fields in one call
and read field by field, it costs a third of a dataclass copy
(bench/guard.py counts every action's instructions).
"""

from __future__ import annotations

from typing import Annotated, NamedTuple

from pydantic import Field

from app.games.base import GameOptions
from app.games.bigtwo.combos import Combo


class BigTwoOptions(GameOptions):
    #: who is "dealer" (the first card goes to the seat on their left); Big Two
    #: has no dealer otherwise.  None: chosen by the seed.
    first_dealer: Annotated[int, Field(strict=True, ge=0, le=3)] | None = None
    #: a seat that passed is skipped until someone takes control
    pass_locks: Annotated[bool, Field(strict=True)] = False


class Trick(NamedTuple):
    """The combination on the table, which the next play must beat."""

    cards: tuple[str, ...]
    seat: int
    combo: Combo


class BigTwoState(NamedTuple):
    options: BigTwoOptions
    seed: int
    dealt_first: int
    hands: tuple[tuple[str, ...], ...]
    #: None once the game is over
    turn: int | None
    #: None when the seat to act has control (leads anything)
    trick: Trick | None
    #: seats that passed since the last play (since control, with pass_locks)
    passed: frozenset[int]
    #: seats in the order they went out; the last holder is appended at the end
    places: tuple[int, ...]
    #: the opening lead, which must include 3C, is still due
    first_play: bool
    #: every card played so far, in order
    played: tuple[str, ...]
    #: the most recent play, kept after the table clears so a returning player
    #: still sees what was last played (public information)
    last_play: Trick | None = None

    @property
    def over(self) -> bool:
        return self.turn is None
