"""The host's settings for a game of Posso (docs/games/posso.md, Options)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from app.games.base import GameOptions

MAX_DECKS = 12
#: the rules a new game is played by (docs/games/posso.md, "Rules versions"):
#: 1 cut with a jitter of +-2 cards, 2 with one that grows with the deck
RULES = 2


class PossoOptions(GameOptions):
    decks: int | None = Field(
        default=None,
        ge=1,
        le=MAX_DECKS,
        strict=True,
        description=(
            "decks of 54 cards (two jokers each); leave empty for one deck fewer "
            "than players, at least 2"
        ),
    )
    start_hand: int = Field(
        default=1, ge=1, le=10, strict=True, description="the hand to start at, 1 to 10"
    )
    first_dealer: int | None = Field(
        default=None,
        ge=0,
        strict=True,
        description="seat of the first dealer; leave empty to draw one at random",
    )
    cutting: Literal["off", "to_lead", "to_win"] = Field(
        default="to_lead", description="the dealer's blind cut before each deal"
    )
    dead_card: bool = Field(
        default=False, strict=True, description="after a Posso the next player draws from the stack"
    )
    reshuffles: int | None = Field(
        default=3,
        ge=0,
        le=100,
        strict=True,
        description="times a hand's stack may be rebuilt from the pile; leave empty for no limit",
    )
    no_posso_down: bool = Field(
        default=False, strict=True, description="players who have gone down may not call Posso"
    )
    #: not the host's to choose: which rules the game is played by, stored with
    #: it so that it replays under them (`PossoGame.stored_options`)
    rules: SkipJsonSchema[int] = Field(default=RULES, ge=1, le=RULES, strict=True)
