"""Possession's action shapes and the field checks only Possession needs.

The envelope (known type, known fields, card syntax, cards held) is checked by
the shared readers in `app.games.base`; what is left here is Possession's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.games.base import IllegalAction, Shapes

#: action type -> (required fields, optional fields)
FIELDS: Shapes = {
    "draw": (frozenset({"source"}), frozenset()),
    "discard": (frozenset({"card"}), frozenset()),
    "meld": (frozenset({"cards"}), frozenset({"from_pile"})),
    "extend": (frozenset({"property", "cards"}), frozenset()),
    "keep": (frozenset(), frozenset()),
    "fold": (frozenset(), frozenset()),
    "timeout": (frozenset(), frozenset()),
}


def count_field(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise IllegalAction(
            "bad_action", "from_pile must be a whole number of pile cards, 0 or more"
        )
    return value


def remove_cards(hand: Sequence[str], chosen: Sequence[str]) -> tuple[str, ...]:
    out = list(hand)
    for c in chosen:
        out.remove(c)
    return tuple(out)
