"""What one seat may know.  Built only from public facts plus the seat's own
hand: other hands and phantoms' markers appear as counts, the stack as a
count, the pile as its top card and size (cards buried in it are out of sight)."""

from __future__ import annotations

from typing import Any

from app.games.posso import flow
from app.games.posso.helps import window_helps
from app.games.posso.legal import timer, to_act
from app.games.posso.model import ANSWER, CUT, OVER, PLAY, WINDOW, PossoState
from app.games.posso.rules import REQUIREMENTS
from app.games.posso.staging import meld_options


def view(s: PossoState, seat: int | None) -> dict[str, Any]:
    return {**seat_view(s, seat), **public_view(s)}


def seat_view(s: PossoState, seat: int | None) -> dict[str, Any]:
    """Who the view is for, its hand and what it may meld, and the Posso
    window (each seat's own: whether a call would help it)."""
    if seat is not None and (
        isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < s.seats
    ):
        raise ValueError(f"no seat {seat!r} in a game of {s.seats}")
    out: dict[str, Any] = {"game": "posso", "seat": seat, "posso": _posso(s)}
    if seat is not None:
        out["hand"] = list(s.hands[seat])
        out["meld_options"] = _meld_options(s, seat)
        if out["posso"] is not None and s.phase == WINDOW:
            # from the viewer's own hand: "only ask me when it could help me"
            out["posso"]["helps"] = window_helps(s, seat)
    return out


def public_view(s: PossoState) -> dict[str, Any]:
    """What every seat's view holds alike."""
    over = s.phase == OVER
    out: dict[str, Any] = {
        "seats": s.seats,
        "phase": s.phase,
        "to_act": sorted(to_act(s)),
        "turn": None if s.phase in (CUT, OVER) else s.turn_seat,
        "dealer": s.dealer,
        "counts": [len(h) for h in s.hands],
        "over": over,
        "result": flow.result_of(s),
        "timer": timer(s),
        "hand_no": s.hand_no,
        "requirement": REQUIREMENTS[s.hand_no].as_json(),
        "melds": [m.as_json() for m in s.melds],
        "down": list(s.down),
        "pile_top": s.pile[-1] if s.pile else None,
        "pile_size": len(s.pile),
        "stack_count": len(s.stack),
        "dead_card": s.dead,
        "cut": _cut(s),
        "totals": list(s.totals),
        "sheet": [flow.copy_row(r) for r in s.sheet],
        "ring": list(s.ring),
        "last_hand": _last_hand(s),
        "options": {
            "decks": s.decks,
            "cutting": s.options.cutting,
            "dead_card": s.options.dead_card,
            "no_posso_down": s.options.no_posso_down,
            "start_hand": s.options.start_hand,
            "reshuffles": s.options.reshuffles,
        },
        "reshuffled": s.reshuffles,
    }
    if over:
        out["hands"] = [list(h) for h in s.hands]
    return out


def _meld_options(s: PossoState, seat: int) -> dict[str, Any] | None:
    """The melds `seat` may stage from its hand, while it may go down (its
    turn, after drawing, not yet down): the table offers only these."""
    if s.phase != PLAY or s.turn_seat != seat or s.down[seat]:
        return None
    return meld_options(s.hands[seat], s.hand_no)


def _posso(s: PossoState) -> dict[str, Any] | None:
    if s.phase not in (WINDOW, ANSWER):
        return None
    return {
        "next": s.turn_seat,
        "card": s.pile[-1],
        "eligible": list(s.eligible),
        "waiting": sorted(set(s.eligible) - set(s.answered)) if s.phase == WINDOW else [],
        "callers": list(s.callers),
        "passed": [x for x in s.answered if x not in s.callers],
        "caller": s.caller,
    }


def _cut(s: PossoState) -> dict[str, Any] | None:
    """The cut due now (what to aim for), or this hand's cut once made."""
    if s.phase == CUT:
        return {
            "due": True,
            "dealer": s.dealer,
            "deck": len(s.stack),
            "target": flow.deal_target(s),
            # how far from the aim the count may land, either way
            "jitter": flow.cut_jitter(len(s.stack), s.options.rules),
            "moot": flow.cut_moot(s),
        }
    if s.cut is None:
        return None
    made = dict(s.cut)
    made["effect"] = dict(made["effect"]) if made["effect"] is not None else None
    return {"due": False, "dealer": s.dealer, **made}


def _last_hand(s: PossoState) -> dict[str, Any] | None:
    if s.last_hand is None:
        return None
    lh = s.last_hand
    return {"hand": lh["hand"], "went_out": lh["went_out"], "hands": [list(h) for h in lh["hands"]]}
