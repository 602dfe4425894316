"""How a hand moves on by itself between players' decisions: the cut and the
deal, phantoms' turns, opening and closing Posso windows, taking from the stack
(with its reshuffle), and the end of a hand with its score-sheet row.

Every function here works on a state the engine has already copied, appends
the events it causes, and leaves the state waiting on a real decision (or over).
"""

from __future__ import annotations

from typing import Any

from app.games.base import Event, event
from app.games.cards import build_deck, rng_for, shuffled, stacked
from app.games.posso.model import ANSWER, CUT, DRAW, OVER, WINDOW, PossoState
from app.games.posso.rules import LAST_HAND, REQUIREMENTS, hand_points

TOILET = 500


def full_deck(decks: int) -> list[str]:
    return build_deck(decks, jokers_per_deck=2)


def real_seats(s: PossoState) -> list[int]:
    return [seat for seat in s.ring if seat is not None]


def deal_target(s: PossoState) -> int:
    """Cards dealt to real players this hand: the cut's aim (or that plus 1)."""
    return REQUIREMENTS[s.hand_no].deal * s.seats


def next_pos(s: PossoState, pos: int) -> int:
    return (pos + 1) % len(s.ring)


def reset_hand(s: PossoState, order: list[str]) -> None:
    """Gather every card into the stack in `order` (top first) for a new hand."""
    s.stack = list(reversed(order))
    s.pile = []
    s.hands = [[] for _ in range(s.seats)]
    s.markers = [[] for _ in s.ring]
    s.melds = []
    s.down = [False] * s.seats
    s.possos = [0] * s.seats
    s.cut = None
    s.eligible = s.answered = s.callers = ()
    s.caller = None
    s.dead = False
    s.reshuffles = 0


def start_hand(s: PossoState, events: list[Event], deck: list[str] | None = None) -> None:
    """Shuffle (or stack) the hand's deck; cut first when cutting is on, else deal."""
    rng = rng_for(s.seed, "deal", s.hand_no)
    full = full_deck(s.decks)
    reset_hand(s, stacked(full, deck, rng) if deck is not None else shuffled(full, rng))
    s.turn = s.pos_of(s.dealer)
    if s.options.cutting != "off":
        s.phase = CUT
        events.append(
            event(
                "cut_due",
                hand=s.hand_no,
                dealer=s.dealer,
                deck=len(s.stack),
                target=deal_target(s),
                moot=cut_moot(s),
            )
        )
        return
    deal(s, events)


def total_after_hit(s: PossoState) -> int:
    """The dealer's running total if the cut due now hits: the leader's total
    (`to_lead`; never a gain for a dealer who leads already) or 0 (`to_win`)."""
    return min(s.totals) if s.options.cutting == "to_lead" else 0


def cut_moot(s: PossoState) -> bool:
    """Whether the cut due now can change nothing, hit or miss: a hit would
    leave the dealer's total as it is (in the first hand every total is 0).
    Nobody is asked to make such a cut; the room lets its wait run out at
    once (docs/games/posso.md, Cutting)."""
    return s.phase == CUT and total_after_hit(s) == s.totals[s.dealer]


def cut_jitter(size: int, rules: int) -> int:
    """How far a cut may land from where it was aimed, either way: two cards
    under the first rules; since, one card in sixteen of the deck (at least
    two), so that a perfect aim hits about as often as a steady hand would
    whatever the deck's size, and no client can be sure of a hit."""
    return 2 if rules < 2 else max(2, round(size / 16))


def cut(s: PossoState, at: float | None, events: list[Event]) -> None:
    """The dealer's blind cut; `at` None is a cut that timed out (a miss).  A
    moot cut that ran out is marked `moot` so the sheet need not call it a
    miss; a cut the dealer made is recorded as made, moot or not, so logs
    written before moot cuts were passed over replay to the same rows."""
    size = len(s.stack)
    target = deal_target(s)
    record: dict[str, Any] = {"at": at, "count": None, "target": target, "hit": False}
    if at is None and cut_moot(s):
        record["moot"] = True
    if at is not None:
        spread = cut_jitter(size, s.options.rules)
        jitter = rng_for(s.seed, "cut", s.hand_no).randint(-spread, spread)
        count = min(size, max(0, round(at * size) + jitter))
        record["count"] = count
        record["hit"] = count in (target, target + 1)
    effect = None
    if record["hit"]:
        before = s.totals[s.dealer]
        after = total_after_hit(s)
        s.totals[s.dealer] = after
        effect = {"seat": s.dealer, "before": before, "after": after}
    record["effect"] = effect
    s.cut = record
    shown = {**record, "effect": dict(effect) if effect is not None else None}
    events.append(event("cut", seat=s.dealer, hand=s.hand_no, **shown))
    deal(s, events)


def deal(s: PossoState, events: list[Event]) -> None:
    """One card at a time clockwise from the dealer's left; phantoms get one card
    in the first round only; then the upturn starts the pile."""
    size = REQUIREMENTS[s.hand_no].deal
    order = [(s.turn + 1 + i) % len(s.ring) for i in range(len(s.ring))]
    for round_no in range(size):
        for pos in order:
            seat = s.ring[pos]
            if seat is None:
                if round_no == 0:
                    s.markers[pos].append(s.stack.pop())
            else:
                s.hands[seat].append(s.stack.pop())
    s.pile.append(s.stack.pop())
    req = REQUIREMENTS[s.hand_no]
    events.append(
        event(
            "hand_started",
            hand=s.hand_no,
            dealer=s.dealer,
            requirement=req.as_json(),
            upturn=s.pile[-1],
            stack=len(s.stack),
        )
    )
    for seat in real_seats(s):
        events.append(event("dealt", seat, hand=s.hand_no, cards=list(s.hands[seat])))
    begin_turn(s, next_pos(s, s.pos_of(s.dealer)), None, events)


def may_rebuild(s: PossoState) -> bool:
    """Whether the stack may be rebuilt from the pile once more this hand.  The
    cap is a ruling of ours (docs/games/posso.md, An empty stack): without it a hand nobody can
    go out of, with nobody calling Posso, would go round for ever."""
    cap = s.options.reshuffles
    return cap is None or s.reshuffles < cap


def take_from_stack(s: PossoState, events: list[Event]) -> str | None:
    """The stack's top card, reshuffling the pile but its top when the stack is
    empty; None when nothing can be taken."""
    if not s.stack:
        if len(s.pile) < 2 or not may_rebuild(s):
            return None
        rest, s.pile = s.pile[:-1], s.pile[-1:]
        s.stack = shuffled(rest, rng_for(s.seed, "reshuffle", s.hand_no, s.reshuffles))
        s.reshuffles += 1
        events.append(event("reshuffled", size=len(s.stack)))
    return s.stack.pop()


def can_take_any(s: PossoState) -> bool:
    """Whether a turn can start with a draw.  A stack spent for good ends the
    hand even if the pile has a card: otherwise the pile top could change hands
    for ever."""
    if s.stack:
        return True
    return may_rebuild(s) and (len(s.pile) >= 2 or (bool(s.pile) and not s.dead))


def begin_turn(s: PossoState, pos: int, discarder: int | None, events: list[Event]) -> None:
    """Hand the turn to position `pos`: phantoms play at once; a Posso window
    opens on the card just laid unless nobody may call."""
    while s.ring[pos] is None:
        card = take_from_stack(s, events)
        if card is None:
            end_hand(s, None, events)
            return
        s.pile.append(card)
        events.append(event("phantom_turned", phantom=pos, card=card))
        pos = next_pos(s, pos)
        discarder = None
    s.turn = pos
    s.dead = False
    nxt = s.ring[pos]
    eligible = tuple(
        seat
        for seat in real_seats(s)
        if seat not in (nxt, discarder) and not (s.options.no_posso_down and s.down[seat])
    )
    s.answered = s.callers = ()
    s.caller = None
    if eligible:
        s.eligible = eligible
        s.phase = WINDOW
        events.append(event("posso_opened", next=nxt, card=s.pile[-1], eligible=list(eligible)))
        return
    s.eligible = ()
    start_draw(s, events)


def start_draw(s: PossoState, events: list[Event]) -> None:
    s.phase = DRAW
    if not can_take_any(s):
        end_hand(s, None, events)


def close_window(s: PossoState, events: list[Event], timed_out: bool = False) -> None:
    """All have answered (or time ran out): the caller nearest clockwise after
    the next player wins priority and the next player must answer."""
    winner = None
    if s.callers:
        ring_size = len(s.ring)
        winner = min(s.callers, key=lambda seat: (s.pos_of(seat) - s.turn) % ring_size)
    events.append(
        event(
            "posso_closed",
            callers=list(s.callers),
            passed=[x for x in s.answered if x not in s.callers],
            silent=[x for x in s.eligible if x not in s.answered],
            caller=winner,
            timed_out=timed_out,
        )
    )
    if winner is None:
        s.eligible = s.answered = ()
        start_draw(s, events)
        return
    s.caller = winner
    s.phase = ANSWER


def allow_posso(s: PossoState, events: list[Event]) -> None:
    """The caller takes the pile top and the stack top; no discard; the next
    player's turn then starts as usual."""
    caller = s.caller
    assert caller is not None
    card = s.pile.pop()
    s.hands[caller].append(card)
    s.possos[caller] += 1
    extra = take_from_stack(s, events)
    events.append(event("possoed", seat=caller, card=card, penalty=extra is not None))
    if extra is None:
        end_hand(s, None, events)
        return
    s.hands[caller].append(extra)
    events.append(event("posso_penalty_card", caller, card=extra))
    s.eligible = s.answered = s.callers = ()
    s.caller = None
    s.dead = s.options.dead_card
    start_draw(s, events)


def end_hand(s: PossoState, went_out: int | None, events: list[Event]) -> None:
    """Score the hand, write its sheet row, show every hand, then deal the next
    (or end the game after hand ten)."""
    req = REQUIREMENTS[s.hand_no]
    pts = [0 if seat == went_out else hand_points(s.hands[seat]) for seat in range(s.seats)]
    s.totals = [t + p for t, p in zip(s.totals, pts, strict=True)]
    row: dict[str, Any] = {
        "hand": s.hand_no,
        "dealer": s.dealer,
        "requirement": req.as_json(),
        "went_out": went_out,
        "points": pts,
        "totals": list(s.totals),
        "toilet": [t > TOILET for t in s.totals],
        "cut": dict(s.cut) if s.cut is not None else None,
        "possos": list(s.possos),
    }
    s.sheet.append(row)
    hands = [list(h) for h in s.hands]
    s.last_hand = {"hand": s.hand_no, "went_out": went_out, "hands": hands}
    if went_out is not None:
        events.append(event("went_out", seat=went_out, hand=s.hand_no))
    events.append(
        event("hand_ended", hand=s.hand_no, row=copy_row(row), hands=[list(h) for h in hands])
    )
    s.eligible = s.answered = s.callers = ()
    s.caller = None
    if s.hand_no >= LAST_HAND:
        s.phase = OVER
        events.append(event("game_over", result=result_of(s)))
        return
    s.hand_no += 1
    seats = real_seats(s)
    s.dealer = seats[(seats.index(s.dealer) + 1) % len(seats)]
    start_hand(s, events)


def copy_row(row: dict[str, Any]) -> dict[str, Any]:
    """A sheet row nobody outside can change the state through."""
    out = dict(row)
    out["requirement"] = dict(row["requirement"])
    out["requirement"]["melds"] = [dict(m) for m in row["requirement"]["melds"]]
    for key in ("points", "totals", "toilet", "possos"):
        out[key] = list(row[key])
    if row["cut"] is not None:
        out["cut"] = dict(row["cut"])
        if row["cut"]["effect"] is not None:
            out["cut"]["effect"] = dict(row["cut"]["effect"])
    return out


def result_of(s: PossoState) -> dict[str, Any] | None:
    if s.phase != OVER:
        return None
    places: list[list[int]] = []
    for total in sorted(set(s.totals)):
        places.append([seat for seat in range(s.seats) if s.totals[seat] == total])
    return {"places": places, "scores": list(s.totals)}
