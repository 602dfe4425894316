"""What one seat may see.

Built only from public state plus the viewer's own hand: other hands appear as
counts, the stock as a count, and the pile as its ajar run (or whole, with
`open_pile`).  Nothing here reads a hidden card, so hiding them cannot leak
through a computed field such as `secured`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from app.games.base import View
from app.games.possession.combos import ajar_depth, is_secured, property_counts
from app.games.possession.model import OVER, PossessionState, Property


def property_json(
    prop: Property, state: PossessionState, in_props: Counter[str] | None = None
) -> dict[str, Any]:
    if in_props is None:
        in_props = property_counts(state.properties)
    return {
        "id": prop.id,
        "owner": prop.owner,
        "kind": prop.kind,
        "cards": list(prop.cards),
        "secured": is_secured(prop, in_props, state.rules),
    }


def build_view(
    state: PossessionState, seat: int | None, result: dict[str, Any] | None, keep: bool
) -> View:
    return {**seat_part(state, seat), **public_part(state, result, keep)}


def seat_part(state: PossessionState, seat: int | None) -> View:
    """Who the view is for, and its hand."""
    view: View = {"game": "possession", "seat": seat}
    if seat is not None:
        view["hand"] = list(state.hands[seat])
    return view


def public_part(state: PossessionState, result: dict[str, Any] | None, keep: bool) -> View:
    """What every seat's view holds alike."""
    rules = state.rules
    over = state.phase == OVER
    in_props = property_counts(state.properties)
    shown = len(state.pile) if rules.open_pile else ajar_depth(state.pile)
    scores = [0] * rules.seats
    for p in state.properties:
        scores[p.owner] += len(p.cards)
    view: View = {
        "seats": rules.seats,
        "phase": state.phase,
        "to_act": [] if over or state.turn is None else [state.turn],
        "turn": state.turn,
        "dealer": state.dealer,
        "counts": [len(h) for h in state.hands],
        "over": over,
        "result": result,
        "starter": state.starter,
        "drawn": state.drawn,
        "last_card": keep,
        "stock": len(state.stock),
        "pile": list(state.pile[len(state.pile) - shown :]),
        "pile_size": len(state.pile),
        "properties": [property_json(p, state, in_props) for p in state.properties],
        "scores": scores,
        "folded": list(state.folded),
        "open_season": state.open_season,
        "turned_over": state.turned_over,
        "decks": rules.decks,
        "set_limit": rules.set_limit,
        "options": {
            "open_pile": rules.open_pile,
            "distinct_suit_sets": rules.distinct_suit_sets,
        },
    }
    if over:
        view["hands"] = [list(h) for h in state.hands]
    return view
