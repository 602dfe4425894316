"""Checking the shape of an incoming action before any rule looks at it.

Actions arrive from browsers, so every field is checked for presence, JSON
type and card syntax here; the rules code below can then trust its inputs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from app.games.base import IllegalAction
from app.games.cards import CardError, validate

#: action type -> (required fields, optional fields)
FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "draw": (frozenset({"source"}), frozenset()),
    "discard": (frozenset({"card"}), frozenset()),
    "meld": (frozenset({"cards"}), frozenset({"from_pile"})),
    "extend": (frozenset({"property", "cards"}), frozenset()),
    "keep": (frozenset(), frozenset()),
    "fold": (frozenset(), frozenset()),
    "timeout": (frozenset(), frozenset()),
}


def action_type(action: Any) -> str:
    if not isinstance(action, dict):
        raise IllegalAction("bad_action", "an action must be a JSON object with a 'type'")
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in FIELDS:
        known = ", ".join(sorted(FIELDS))
        raise IllegalAction("bad_action", f"unknown action type {kind!r}; expected one of {known}")
    required, optional = FIELDS[kind]
    missing = required - action.keys()
    if missing:
        raise IllegalAction("bad_action", f"{kind} needs {', '.join(sorted(missing))}")
    extra = action.keys() - required - optional - {"type"}
    if extra:
        raise IllegalAction("bad_action", f"{kind} does not take {', '.join(sorted(extra))}")
    return kind


def card_field(value: Any) -> str:
    try:
        return validate(value, jokers=False)
    except CardError as err:
        raise IllegalAction("bad_card", str(err)) from None


def cards_field(value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise IllegalAction("bad_action", "cards must be a non-empty list of card codes")
    return [card_field(v) for v in value]


def count_field(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise IllegalAction(
            "bad_action", "from_pile must be a whole number of pile cards, 0 or more"
        )
    return value


def check_held(hand: Sequence[str], chosen: Sequence[str]) -> None:
    """Refuse cards the seat does not hold (counting copies with two decks)."""
    held = Counter(hand)
    for card, n in Counter(chosen).items():
        if held[card] < n:
            if held[card] == 0:
                raise IllegalAction("not_in_hand", f"you do not hold {card}")
            raise IllegalAction("not_in_hand", f"you hold {held[card]} {card}, not {n}")


def remove_cards(hand: Sequence[str], chosen: Sequence[str]) -> tuple[str, ...]:
    out = list(hand)
    for c in chosen:
        out.remove(c)
    return tuple(out)
