"""Which legal actions a strong bot spends its playouts on.

A budget split over hundreds of actions (a Big Two lead lists every
combination in hand) would give each too few playouts to tell them apart, so
each game keeps the actions that differ in what matters, always with the
heuristic's own choice among them (the search can only improve on it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.bots.base import Action
from app.bots.bigtwo import plan_units
from app.bots.posso import keep_score
from app.games import cards
from app.games.bigtwo.combos import classify
from app.games.bigtwo.order import POWER

View = dict[str, Any]
#: (view, legal, seat, the heuristic's choice) -> the candidates
Shortlist = Callable[[View, list[Action], int, Action], list[Action]]

#: Big Two: the cheapest plays kept of each size
BIGTWO_PER_SIZE = 1
#: Posso: the discards weighed before going down
POSSO_DISCARDS = 4


def _with(first: Action, rest: list[Action]) -> list[Action]:
    out = [first]
    for action in rest:
        if action not in out:
            out.append(action)
    return out


def bigtwo_shortlist(view: View, legal: list[Action], seat: int, chosen: Action) -> list[Action]:
    """Of each size, the plays that break the fewest units of the hand's plan
    (weakest first), the single highest card (a block), and passing."""
    hand = tuple(sorted(view["hand"], key=POWER.__getitem__))
    before = plan_units(hand)

    def key(action: Action) -> tuple[int, tuple[int, ...]]:
        rest = tuple(c for c in hand if c not in set(action["cards"]))
        combo = classify(action["cards"])
        return (plan_units(rest) + 1 - before, combo.key if combo else (0,))

    plays = [a for a in legal if a["type"] == "play"]
    keep: list[Action] = [a for a in legal if a["type"] == "pass"]
    for size in (1, 2, 3, 5):
        keep += sorted((a for a in plays if len(a["cards"]) == size), key=key)[:BIGTWO_PER_SIZE]
    singles = [a for a in plays if len(a["cards"]) == 1]
    if singles:
        keep.append(max(singles, key=lambda a: POWER[a["cards"][0]]))
    return _with(chosen, keep)


def _possum_sig(action: Action) -> tuple[tuple[int, ...], int] | None:
    if action["type"] != "play":
        return None
    return tuple(sorted(cards.rank(c) for c in action["cards"])), cards.rank(action["cards"][-1])


def possum_shortlist(view: View, legal: list[Action], seat: int, chosen: Action) -> list[Action]:
    """One play for each multiset of values and top value (suits never matter
    in Possum), the heuristic's own play standing for its own."""
    seen = {_possum_sig(chosen)}
    keep = [chosen]
    for action in legal:
        sig = _possum_sig(action)
        if sig not in seen:
            seen.add(sig)
            keep.append(action)
    return keep


def every_action(view: View, legal: list[Action], seat: int, chosen: Action) -> list[Action]:
    """Possession's lists are short (a draw from two places; a put-down of one
    of ten cards, a meld or an extension): every action is searched."""
    return _with(chosen, legal)


def posso_shortlist(view: View, legal: list[Action], seat: int, chosen: Action) -> list[Action]:
    """Where to draw from, and which card to throw before going down (the
    heuristic's few least useful): the choices that decide how fast a hand
    comes together.  Calling or allowing a Posso, the cut, going down and
    laying off once down stay the heuristic's: they are quick rules of thumb
    that a few dozen playouts of a long hand would not improve on."""
    if view["phase"] == "draw":
        return _with(chosen, legal)
    if view["phase"] != "play" or view["down"][seat]:
        return [chosen]
    if any(a["type"] == "go_down" for a in legal):
        return [chosen]
    hand: list[str] = view["hand"]
    discards = [a for a in legal if a["type"] == "discard"]
    discards.sort(key=lambda a: keep_score(a["card"], hand, view["requirement"]))
    return _with(chosen, discards[:POSSO_DISCARDS])


SHORTLISTS: dict[str, Shortlist] = {
    "posso": posso_shortlist,
    "bigtwo": bigtwo_shortlist,
    "possum": possum_shortlist,
    "possession": every_action,
}
