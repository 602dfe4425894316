"""Who may act and what they may do.  Where the choices are combinatorial the
list is representative (as `Game.legal_actions` allows): one go-down arrangement (from the finder),
play-ons one card at a time, and a few cut positions."""

from __future__ import annotations

from typing import Any

from app.games.posso import flow
from app.games.posso.finder import find_go_down
from app.games.posso.melds import HIGH, LOW
from app.games.posso.model import ANSWER, CUT, DRAW, PLAY, WINDOW, PossoState
from app.games.posso.rules import HIGHEST, LOWEST, SET, is_wild, natural, value

CUT_SPOTS = (0.1, 0.3, 0.5, 0.7, 0.9)
#: the timer of a cut that can change nothing (`flow.cut_moot`): nobody is
#: asked to make it, and the room gives it no time, so its timeout (a miss)
#: comes at once.  The dealer's own `cut` is still accepted, as old logs hold.
CUT_MOOT = "cut_moot"


def to_act(s: PossoState) -> set[int]:
    if s.phase == CUT:
        return set() if flow.cut_moot(s) else {s.dealer}
    if s.phase == WINDOW:
        return set(s.eligible) - set(s.answered)
    if s.phase in (ANSWER, DRAW, PLAY):
        return {s.turn_seat}
    return set()


def timer(s: PossoState) -> str | None:
    if s.phase == CUT:
        return CUT_MOOT if flow.cut_moot(s) else CUT
    return s.phase if s.phase in (WINDOW, ANSWER) else None


def cut_aim(s: PossoState) -> float:
    """The position that, before the jitter, lands mid-way in the hit window."""
    return min(1.0, (flow.deal_target(s) + 0.5) / len(s.stack))


def legal_actions(s: PossoState, seat: int) -> list[dict[str, Any]]:
    if seat not in to_act(s):
        return []
    if s.phase == CUT:
        return [{"type": "cut", "at": round(x, 4)} for x in (cut_aim(s), *CUT_SPOTS)]
    if s.phase == WINDOW:
        return [{"type": "call_posso"}, {"type": "pass_posso"}]
    if s.phase == ANSWER:
        return [{"type": "answer_posso", "allow": True}, {"type": "answer_posso", "allow": False}]
    if s.phase == DRAW:
        out = []
        if s.stack or (len(s.pile) >= 2 and flow.may_rebuild(s)):
            out.append({"type": "draw", "source": "stack"})
        if s.pile and not s.dead:
            out.append({"type": "draw", "source": "pile"})
        return out
    return _turn_moves(s, seat)


def _turn_moves(s: PossoState, seat: int) -> list[dict[str, Any]]:
    hand = s.hands[seat]
    distinct = list(dict.fromkeys(hand))
    out: list[dict[str, Any]] = []
    if not s.down[seat]:
        melds = find_go_down(hand, s.hand_no)
        if melds is not None:
            out.append({"type": "go_down", "melds": melds})
    else:
        out.extend(_play_ons(s, distinct))
        out.extend(_swaps(s, distinct))
    out.extend({"type": "discard", "card": c} for c in distinct)
    return out


def _play_ons(s: PossoState, distinct: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in s.melds:
        for c in distinct:
            if m.kind == SET:
                if is_wild(c) or value(c) == m.rank:
                    out.append({"type": "play_on", "meld": m.id, "cards": [c]})
                continue
            if m.full:
                break
            ends = []
            if is_wild(c):
                ends = [e for e, ok in ((LOW, m.low > LOWEST), (HIGH, m.high < HIGHEST)) if ok]
            elif c[-1] == m.suit and value(c) == m.low - 1:
                ends = [LOW]
            elif c[-1] == m.suit and value(c) == m.high + 1:
                ends = [HIGH]
            out.extend({"type": "play_on", "meld": m.id, "cards": [c], "end": e} for e in ends)
    return out


def _swaps(s: PossoState, distinct: list[str]) -> list[dict[str, Any]]:
    held = set(distinct)
    out: list[dict[str, Any]] = []
    for m in s.melds:
        if m.kind == SET or m.full:
            continue
        for i, c in enumerate(m.cards):
            if not is_wild(c):
                continue
            want = natural(m.low + i, m.suit)
            if want not in held:
                continue
            for to, ok in ((LOW, m.low > LOWEST), (HIGH, m.high < HIGHEST)):
                if ok:
                    out.append({"type": "swap_wild", "meld": m.id, "card": want, "to": to})
    return out
