"""Checking and carrying out one player's action.

Each handler works on a copy the engine made, so it may check as it goes:
raising IllegalAction simply drops the copy.  The envelope (known fields,
card codes, cards held) is checked by the shared readers in `app.games.base`;
the Posso-specific fields are checked here just as strictly, so a bad message
always gets a clear reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.games.base import Event, IllegalAction, Shapes, check_held, event, read_card, read_cards
from app.games.cards import cards_text
from app.games.posso import flow
from app.games.posso.melds import HIGH, LOW, Meld, extend, new_meld, swap
from app.games.posso.model import ANSWER, CUT, DRAW, OVER, PLAY, WINDOW, PossoState
from app.games.posso.rules import REQUIREMENTS, RUN, SET

#: action type -> (required fields, optional fields)
FIELDS: Shapes = {
    "draw": (frozenset({"source"}), frozenset()),
    "go_down": (frozenset({"melds"}), frozenset()),
    "play_on": (frozenset({"meld", "cards"}), frozenset({"end"})),
    "swap_wild": (frozenset({"meld", "card", "to"}), frozenset()),
    "discard": (frozenset({"card"}), frozenset()),
    "call_posso": (frozenset(), frozenset()),
    "pass_posso": (frozenset(), frozenset()),
    "answer_posso": (frozenset({"allow"}), frozenset()),
    "cut": (frozenset({"at"}), frozenset()),
    "timeout": (frozenset(), frozenset()),
}


def take_from_hand(hand: list[str], cards: list[str]) -> None:
    """Remove `cards` from `hand`, or raise (changing nothing) if it lacks any."""
    check_held(hand, cards)
    for c in cards:
        hand.remove(c)


def _own_turn(s: PossoState, seat: int) -> None:
    """The seat must be the one whose turn it is, past any Posso business."""
    mine = s.phase in (DRAW, PLAY, WINDOW, ANSWER) and s.ring[s.turn] == seat
    if mine and s.phase == WINDOW:
        raise IllegalAction(
            "posso_window_open", "wait: the Posso window on the pile top is still open"
        )
    if mine and s.phase == ANSWER:
        raise IllegalAction(
            "posso_answer_due", "someone called Posso: answer it first (answer_posso)"
        )
    if s.phase == CUT and seat == s.dealer:
        raise IllegalAction("cut_due", "cut the deck first")
    if not mine:
        raise IllegalAction("not_your_turn", "it is not your turn")


def _playing(s: PossoState, seat: int) -> None:
    _own_turn(s, seat)
    if s.phase == DRAW:
        raise IllegalAction("must_draw_first", "start your turn by drawing a card")


def _down(s: PossoState, seat: int) -> None:
    _playing(s, seat)
    if not s.down[seat]:
        raise IllegalAction("not_down", "you may play on only after you have gone down")


def draw(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    _own_turn(s, seat)
    if s.phase == PLAY:
        raise IllegalAction("already_drew", "you have drawn already this turn")
    source = a["source"]
    if source == "pile":
        if not s.pile:
            raise IllegalAction("pile_empty", "the pile is empty: draw from the stack")
        if s.dead:
            raise IllegalAction(
                "dead_card", "after a Posso the pile top is dead: draw from the stack"
            )
        card = s.pile.pop()
        s.hands[seat].append(card)
        events.append(event("drew", seat=seat, source="pile", card=card))
    elif source == "stack":
        got = flow.take_from_stack(s, events)
        if got is None:
            raise IllegalAction(
                "stack_empty", "the stack is empty and cannot be rebuilt: take the pile card"
            )
        s.hands[seat].append(got)
        events.append(event("drew", seat=seat, source="stack"))
        events.append(event("drew_card", seat, card=got))
    else:
        raise IllegalAction("bad_action", "source must be 'stack' or 'pile'")
    s.phase = PLAY
    s.dead = False


def _new_id(s: PossoState) -> str:
    s.meld_counter += 1
    return f"m{s.meld_counter}"


def go_down(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    _playing(s, seat)
    if s.down[seat]:
        raise IllegalAction("already_down", "you have gone down already this hand")
    raw = a["melds"]
    if not isinstance(raw, list) or not raw:
        raise IllegalAction("bad_action", "melds must be a non-empty list")
    parsed: list[tuple[str, list[str]]] = []
    for m in raw:
        if not isinstance(m, dict) or set(m) != {"kind", "cards"}:
            raise IllegalAction("bad_action", "each meld is {'kind': 'set'|'run', 'cards': [...]}")
        if m["kind"] not in (SET, RUN):
            raise IllegalAction("bad_action", "a meld's kind is 'set' or 'run'")
        parsed.append((m["kind"], read_cards(m["cards"], what="a meld's cards")))
    req = REQUIREMENTS[s.hand_no]
    hand = s.hands[seat]
    take_from_hand(hand, [c for _, cards in parsed for c in cards])
    # Each meld is judged on its own first, so "3♣ 5♣ is not a set" is said
    # before any complaint about how many melds of which size the hand needs.
    melds = [new_meld("", seat, k, cards) for k, cards in parsed]
    for kind, cards in parsed:
        _check_size(s.hand_no, kind, cards)
    shapes = sorted((k, len(c)) for k, c in parsed)
    if req.all_cards:
        fits = len(parsed) == len(req.melds) and all(k == RUN and len(c) >= 5 for k, c in parsed)
    else:
        fits = shapes == sorted(req.melds)
    if not fits:
        raise IllegalAction(
            "wrong_melds",
            f"hand {s.hand_no} asks for {'' if req.all_cards else 'exactly '}{req.text}; "
            "you laid " + ", ".join(f"a {k} of {len(c)} ({cards_text(c)})" for k, c in parsed),
        )
    suits = [m.suit for m in melds if m.kind == RUN]
    if req.distinct_suits and len(set(suits)) != len(suits):
        raise IllegalAction(
            "same_suit_runs", f"hand {s.hand_no}'s runs must each be a different suit"
        )
    if req.all_cards and hand:
        raise IllegalAction(
            "must_use_every_card",
            f"in hand {s.hand_no} you go down and out at once: every card in your hand must "
            f"be laid ({len(hand)} left over)",
        )
    laid = [Meld(_new_id(s), m.owner, m.kind, m.cards, m.suit, m.low, m.rank) for m in melds]
    s.melds.extend(laid)
    s.down[seat] = True
    events.append(event("went_down", seat=seat, melds=[m.as_json() for m in laid]))
    if not hand:
        flow.end_hand(s, seat, events)


def _check_size(hand_no: int, kind: str, cards: list[str]) -> None:
    """Refuse a meld of a size the hand never lays, saying so of that meld
    ("too few cards") before any complaint about the arrangement as a whole."""
    req = REQUIREMENTS[hand_no]
    sizes = req.sizes(kind)
    if len(cards) in sizes:
        return
    what = f"{cards_text(cards)} is a {kind} of {len(cards)}"
    if not sizes:
        raise IllegalAction(
            "wrong_melds", f"{what}, but hand {hand_no} lays no {kind}s: it asks for {req.text}"
        )
    need = f"{sizes[0]} or more" if req.all_cards else " or ".join(str(n) for n in sizes)
    few = "few" if len(cards) < sizes[0] else "many"
    raise IllegalAction(
        "wrong_melds", f"{what}: too {few} cards, as hand {hand_no}'s {kind}s have {need}"
    )


def _meld(s: PossoState, mid: object) -> int:
    if not isinstance(mid, str):
        raise IllegalAction("bad_action", "meld must be a meld id such as 'm1'")
    for i, m in enumerate(s.melds):
        if m.id == mid:
            return i
    raise IllegalAction("no_such_meld", f"there is no meld {mid!r} on the table")


def play_on(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    _down(s, seat)
    i = _meld(s, a["meld"])
    cards = read_cards(a["cards"])
    end = a.get("end")
    if end not in (None, LOW, HIGH):
        raise IllegalAction("bad_action", "end must be 'low' or 'high'")
    take_from_hand(s.hands[seat], cards)
    meld, joined = extend(s.melds[i], cards, end)
    s.melds[i] = meld
    events.append(event("played_on", seat=seat, meld=meld.as_json(), cards=cards, end=joined))
    if not s.hands[seat]:
        flow.end_hand(s, seat, events)


def swap_wild(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    _down(s, seat)
    i = _meld(s, a["meld"])
    card = read_card(a["card"])
    to = a["to"]
    if to not in (LOW, HIGH):
        raise IllegalAction("bad_action", "to must be 'low' or 'high'")
    take_from_hand(s.hands[seat], [card])
    meld, wild = swap(s.melds[i], card, to)
    s.melds[i] = meld
    events.append(
        event("swapped_wild", seat=seat, meld=meld.as_json(), card=card, wild=wild, end=to)
    )
    if not s.hands[seat]:
        flow.end_hand(s, seat, events)


def discard(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    _playing(s, seat)
    card = read_card(a["card"])
    take_from_hand(s.hands[seat], [card])
    s.pile.append(card)
    events.append(event("discarded", seat=seat, card=card))
    if not s.hands[seat]:
        flow.end_hand(s, seat, events)
        return
    flow.begin_turn(s, flow.next_pos(s, s.turn), seat, events)


def _window(s: PossoState, seat: int) -> None:
    if s.phase != WINDOW:
        raise IllegalAction("no_posso_window", "there is no Posso window open now")
    if seat not in s.eligible:
        if s.ring[s.turn] == seat:
            raise IllegalAction(
                "posso_next_player", "it is your turn next: you cannot call Posso, just draw"
            )
        if s.options.no_posso_down and s.down[seat]:
            raise IllegalAction("posso_gone_down", "you have gone down: no Posso for you this hand")
        raise IllegalAction("posso_own_discard", "you cannot call Posso on your own discard")
    if seat in s.answered:
        raise IllegalAction("already_answered", "you have already answered this Posso window")


def _answer_window(s: PossoState, seat: int, call: bool, events: list[Event]) -> None:
    _window(s, seat)
    s.answered = (*s.answered, seat)
    if call:
        s.callers = (*s.callers, seat)
    events.append(event("posso_called" if call else "posso_passed", seat=seat))
    if len(s.answered) == len(s.eligible):
        flow.close_window(s, events)


def call_posso(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    _answer_window(s, seat, True, events)


def pass_posso(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    _answer_window(s, seat, False, events)


def answer(s: PossoState, allow: bool, events: list[Event], timed_out: bool = False) -> None:
    nxt = s.turn_seat
    events.append(
        event("posso_answered", seat=nxt, caller=s.caller, allow=allow, timed_out=timed_out)
    )
    if allow:
        flow.allow_posso(s, events)
        return
    card = s.pile.pop()
    s.hands[nxt].append(card)
    events.append(event("drew", seat=nxt, source="pile", card=card))
    s.eligible = s.answered = s.callers = ()
    s.caller = None
    s.phase = PLAY


def answer_posso(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    if s.phase != ANSWER:
        raise IllegalAction("no_posso_call", "there is no Posso call to answer")
    if seat != s.turn_seat:
        raise IllegalAction("not_your_turn", "only the next player answers a Posso call")
    allow = a["allow"]
    if not isinstance(allow, bool):
        raise IllegalAction("bad_action", "allow must be true or false")
    answer(s, allow, events)


def cut(s: PossoState, seat: int, a: dict[str, Any], events: list[Event]) -> None:
    if s.phase != CUT:
        raise IllegalAction("no_cut", "there is no cut to make now")
    if seat != s.dealer:
        raise IllegalAction("not_your_turn", "only the dealer cuts")
    at = a["at"]
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not 0 <= at <= 1:
        raise IllegalAction("bad_action", "at must be a number from 0 to 1")
    flow.cut(s, float(at), events)


def timeout(s: PossoState, timer: str, events: list[Event]) -> None:
    events.append(event("timed_out", timer=timer))
    if s.phase == WINDOW:
        flow.close_window(s, events, timed_out=True)
    elif s.phase == ANSWER:
        answer(s, True, events, timed_out=True)
    else:
        assert s.phase == CUT
        flow.cut(s, None, events)


Handler = Callable[[PossoState, int, dict[str, Any], list[Event]], None]
HANDLERS: dict[str, Handler] = {
    "draw": draw,
    "go_down": go_down,
    "play_on": play_on,
    "swap_wild": swap_wild,
    "discard": discard,
    "call_posso": call_posso,
    "pass_posso": pass_posso,
    "answer_posso": answer_posso,
    "cut": cut,
}

__all__ = ["FIELDS", "HANDLERS", "OVER", "timeout"]
