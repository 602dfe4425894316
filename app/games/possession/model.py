"""The state of a Possession game.

Everything is a frozen dataclass of tuples so `apply` can build a new state by
replacing only the fields a move touches (hands that did not change are shared
between old and new states), and so states compare with `==` and deep-copy
cleanly for replays and tests.  Piles are stored bottom-first with the top card
last, the order in which cards physically land on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, StrictBool, StrictInt

from app.games.base import GameOptions

PLAY = "play"
SHOWDOWN = "showdown"
OVER = "over"

SET = "set"
RUN = "run"

HAND_SIZE = 9


class PossessionOptions(GameOptions):
    """Room settings a host picks before the game starts (docs/games/possession.md, Options)."""

    first_dealer: StrictInt | None = Field(default=None, ge=0, le=3)
    open_pile: StrictBool = False
    distinct_suit_sets: StrictBool = False


@dataclass(frozen=True)
class Rules:
    """What the seat count and options fix for the whole game, worked out once
    so the move code never re-derives deck counts or set limits."""

    seats: int
    decks: int
    #: largest set: 4 with one deck or distinct suits, 8 with two decks
    set_limit: int
    #: sets may not repeat a suit (always true with one deck)
    distinct_sets: bool
    open_pile: bool
    #: the option as the host set it, echoed in views
    distinct_suit_sets: bool


@dataclass(frozen=True)
class Property:
    """A melded combination in someone's estate.  The id never changes, even
    when the property is stolen, so clients can animate it moving."""

    id: str
    owner: int
    kind: str
    #: runs low to high; sets in suit order
    cards: tuple[str, ...]


@dataclass(frozen=True)
class PossessionState:
    rules: Rules
    dealer: int
    #: who won the start decision (public: it is who played first)
    starter: int
    #: each hand in suit-then-rank order
    hands: tuple[tuple[str, ...], ...]
    #: face down, top card last
    stock: tuple[str, ...]
    #: face up, top card last
    pile: tuple[str, ...]
    properties: tuple[Property, ...]
    next_id: int
    phase: str
    turn: int | None
    #: the turn seat has picked up this turn (play phase only)
    drawn: bool
    #: three players: the pile has been turned over into a new stock
    turned_over: bool
    folded: tuple[int, ...]
    open_season: bool
    #: the seat whose empty hand ended the game, if that is how it ended
    emptied_by: int | None
