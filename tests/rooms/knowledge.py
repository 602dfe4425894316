"""What each seat may know, computed from the engines' states, to judge frames.

For each game, `known(state, seat)` is the multiset of cards the seat may know
in that state: its own hand, the public cards, and every hand once the game is
over.  A frame made during a change may also speak of the state just before it
(the card just played was in a hand a moment ago), so a frame is judged against
the union of both.  Multi-deck games repeat codes: the check counts copies, per
part of the frame, so a second copy of a card can leak too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.api.client import cards_in
from tests.rooms.tinygame import tiny_known

Known = Callable[[Any, int | None], Counter[str]]


def _over_hands(state: Any, known: Counter[str]) -> None:
    if getattr(state, "over", False) or getattr(state, "phase", None) == "over":
        for h in state.hands:
            known.update(h)


def bigtwo_known(state: Any, seat: int | None) -> Counter[str]:
    known: Counter[str] = Counter(state.played)
    if state.trick is not None:
        known.update(state.trick.cards)
    if seat is not None:
        known.update(state.hands[seat])
    _over_hands(state, known)
    known["3C"] = max(known["3C"], 1)  # named by the rules (the opening lead), not dealt knowledge
    return known


def possum_known(state: Any, seat: int | None) -> Counter[str]:
    known: Counter[str] = Counter(state.pile)
    if seat is not None:
        known.update(state.hands[seat])
    _over_hands(state, known)
    return known


def posso_known(state: Any, seat: int | None) -> Counter[str]:
    """Own hand, the melds, the pile (every pile card was public when it was
    discarded or turned up), and the hands shown at the end of the last hand."""
    known: Counter[str] = Counter(state.pile)
    for meld in state.melds:
        known.update(meld.cards)
    if state.last_hand is not None:
        for h in state.last_hand["hands"]:
            known.update(h)
    if seat is not None:
        known.update(state.hands[seat])
    _over_hands(state, known)
    return known


def possession_known(state: Any, seat: int | None) -> Counter[str]:
    """Own hand, every estate, and the pile (discards are public)."""
    known: Counter[str] = Counter(state.pile)
    for prop in state.properties:
        known.update(prop.cards)
    if seat is not None:
        known.update(state.hands[seat])
    _over_hands(state, known)
    return known


KNOWN: dict[str, Known] = {
    "posso": posso_known,
    "possession": possession_known,
    "tiny": tiny_known,
    "bigtwo": bigtwo_known,
    "possum": possum_known,
}


#: public events in which a seat shows cards from its own hand; the change may
#: already have moved them out of sight (a Posso hand that ends on that discard)
_SHOWS_OWN_CARDS = {
    "posso": frozenset({"went_down", "played_on", "swapped_wild", "discarded"}),
    # three players: the first exhaustion turns the pile, this discard included, into a stock
    "possession": frozenset({"discarded"}),
}


def revealed(game: str, before: Any, msg: dict[str, Any]) -> Counter[str]:
    """Cards an event may name because its actor just showed them from hand."""
    ev = msg.get("event")
    if before is None or not ev or ev.get("type") not in _SHOWS_OWN_CARDS.get(game, ()):
        return Counter()
    seat = ev.get("seat")
    if not isinstance(seat, int):
        return Counter()
    return Counter(before.hands[seat])


def parts(msg: dict[str, Any]) -> list[tuple[str, Any]]:
    """The separately judged parts of a frame: each field of an event, each legal
    action, each key of a view's game."""
    if "event" in msg:  # each field alone: `cards` and `top` may name one card twice
        return [(f"event.{k}", v) for k, v in msg["event"].items()]
    if "view" in msg:
        view = msg["view"]
        # each legal action on its own: different actions reuse the same cards
        out: list[tuple[str, Any]] = [
            (f"legal[{i}]", a) for i, a in enumerate(view.get("legal") or [])
        ]
        game = view.get("game") or {}
        out.extend((f"game.{k}", v) for k, v in game.items() if k != "meld_options")
        # Posso's melds one may stage: each on its own, as one card of the
        # hand may stand in several (a set of its rank and runs of its suit)
        options = game.get("meld_options") or {}
        out.append(("game.meld_options.wilds", options.get("wilds")))
        out.extend(
            (f"game.meld_options.melds[{i}]", m) for i, m in enumerate(options.get("melds") or [])
        )
        return out
    return [("reply", msg)]


def leaks(
    known_before: Counter[str],
    known_after: Counter[str],
    msg: dict[str, Any],
    shown: Counter[str] | None = None,
) -> list[str]:
    # what an event shows from a hand are more copies than were known before
    allowed = (known_before + (shown or Counter())) | known_after
    found: list[str] = []
    for name, part in parts(msg):
        have = Counter(cards_in(part))
        extra = have - allowed
        if extra:
            found.append(f"{name}: {dict(extra)}")
    return found
