"""Could the card in a Posso window help a seat?  The answer behind "only ask
me when the card could help me" (docs/games/posso.md, "Quieter Posso").

It is a hint, not a rule: nothing the engine allows depends on it.  It reads
only the seat's own hand and what everyone sees (the card, the hand's
requirement, who is down), so it may go into that seat's own view and
nobody else's.  It is deliberately generous: a card counts as helping when it
could take part in some meld this hand lays, with cards the seat holds.
"""

from __future__ import annotations

from app.games.posso.model import WINDOW, PossoState
from app.games.posso.rules import REQUIREMENTS, RUN, SET, is_wild, value


def card_helps(hand: list[str], card: str, hand_no: int, down: bool) -> bool:
    """Would `card` join a meld this hand lays, beside cards in `hand`?

    - once down, no: a Posso adds the card and a penalty card to a hand that
      is trying to empty itself;
    - a wild (2 or joker), yes;
    - a natural of a rank the hand holds, when this hand lays a set;
    - a natural of a suit the hand holds within one run's reach of it (the
      run's size less one, either way), when this hand lays a run.
    """
    if down:
        return False
    if is_wild(card):
        return True
    req = REQUIREMENTS[hand_no]
    kinds = {kind for kind, _ in req.melds}
    naturals = [c for c in hand if not is_wild(c)]
    rank, suit = card[:-1], card[-1]
    if SET in kinds and any(c[:-1] == rank for c in naturals):
        return True
    if RUN in kinds:
        reach = max(size for kind, size in req.melds if kind == RUN) - 1
        v = value(card)
        return any(c[-1] == suit and 0 < abs(value(c) - v) <= reach for c in naturals)
    return False


def window_helps(s: PossoState, seat: int) -> bool | None:
    """Does the card in the open Posso window help `seat`?  None: no window."""
    if s.phase != WINDOW or not s.pile:
        return None
    return card_helps(s.hands[seat], s.pile[-1], s.hand_no, s.down[seat])
