"""Worlds a seat cannot tell apart: full game states sampled from one view.

A strong bot searches over complete states, but a seat sees only its view, so
each search samples a *world*: the cards it cannot see (other hands, the
stock, cards buried in a pile) dealt at random from the cards its view leaves
unaccounted for, in exactly the numbers the view shows (hand sizes, stock and
pile sizes), with everything public (tables, tricks, melds, turn, phase)
copied as it is.  Such a world gives the same view to the seat as the real
state would, up to what the view does not show (the order of a shuffled
stock, a future reshuffle's seed); search over many of them is determinized
search.

Only the view goes in, so a world can carry nothing the seat may not know:
two states that show the seat the same view give the same worlds for the
same random generator.  What each view does not show also bounds what the
sampling can respect: a Posso view does not list the cards buried in the
pile, so those are dealt among the unseen cards like any other.  (A Big Two
view lists every card played, so only the other hands are dealt.)
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from app.games.bigtwo.combos import classify
from app.games.bigtwo.model import BigTwoOptions, BigTwoState, Trick
from app.games.bigtwo.order import DECK as BIGTWO_DECK
from app.games.bigtwo.order import by_power
from app.games.cards import build_deck, sort_key
from app.games.possession.combos import ajar_depth
from app.games.possession.model import PossessionState, Property, Rules
from app.games.posso.flow import full_deck as posso_deck
from app.games.posso.melds import Meld
from app.games.posso.model import CUT as POSSO_CUT
from app.games.posso.model import OVER as POSSO_OVER
from app.games.posso.model import PossoState
from app.games.posso.options import PossoOptions
from app.games.posso.rules import RUN as POSSO_RUN
from app.games.posso.rules import value as posso_value
from app.games.possum.engine import full_deck as possum_deck
from app.games.possum.model import PossumOptions, PossumState
from app.games.possum.plays import hand_key

View = dict[str, Any]
Sampler = Callable[[View, int, random.Random], Any]


class Unaccounted(ValueError):
    """The view accounts for cards the deck does not hold (a view from another game)."""


def unseen(deck: Iterable[str], seen: Iterable[str]) -> list[str]:
    """The deck less every card the view shows, copies counted, in a fixed order
    (so the same view and generator always give the same world)."""
    left = Counter(deck)
    left.subtract(seen)
    if any(n < 0 for n in left.values()):
        raise Unaccounted("the view shows cards the deck does not hold")
    return sorted(left.elements(), key=sort_key)


def deal_out(pool: list[str], sizes: list[int], rng: random.Random) -> list[list[str]]:
    """`pool` shuffled and cut into piles of `sizes` (which must add up to it)."""
    if sum(sizes) != len(pool):
        raise Unaccounted(f"{len(pool)} unseen cards, but the view counts {sum(sizes)}")
    rng.shuffle(pool)
    out, at = [], 0
    for n in sizes:
        out.append(pool[at : at + n])
        at += n
    return out


def seat_hands(view: View, seat: int, others: list[int], dealt: list[list[str]]) -> list[list[str]]:
    """Every seat's hand: the seat's own from its view, the others as dealt."""
    hands = [list(view["hand"]) if s == seat else [] for s in range(len(view["counts"]))]
    for s, cards in zip(others, dealt, strict=True):
        hands[s] = cards
    return hands


# -- Possum -------------------------------------------------------------------------


def possum_world(view: View, seat: int, rng: random.Random) -> PossumState:
    o = view["options"]
    opts = PossumOptions(
        multiply=o["multiply"],
        multi=o["multi"],
        no_face_cards=o["no_face_cards"],
        single_draw=o["single_draw"],
    )
    counts: list[int] = view["counts"]
    pool = unseen(possum_deck(view["seats"], opts), [*view["hand"], view["top"]])
    others = [s for s in range(view["seats"]) if s != seat]
    sizes = [counts[s] for s in others] + [view["pile_count"] - 1, view["draw_count"]]
    *dealt, under, draw = deal_out(pool, sizes, rng)
    hands = seat_hands(view, seat, others, dealt)
    return PossumState(
        options=opts,
        seed=rng.getrandbits(32),  # the seed of reshuffles to come is unknown too
        dealer=view["dealer"],
        hands=tuple(tuple(sorted(h, key=hand_key)) for h in hands),
        pile=(*under, view["top"]),
        draw=tuple(draw),
        turn=view["turn"],
        draws_taken=view["draws_taken"],
        reshuffles=0,
        winner=None,
        stalled=False,
    )


# -- Big Two ------------------------------------------------------------------------


def _trick(shown: dict[str, Any] | None) -> Trick | None:
    if shown is None:
        return None
    combo = classify(shown["cards"])
    assert combo is not None, "a trick on the table is a combination"
    return Trick(cards=tuple(shown["cards"]), seat=shown["seat"], combo=combo)


def bigtwo_world(view: View, seat: int, rng: random.Random) -> BigTwoState:
    trick, last = _trick(view["trick"]), _trick(view["last_play"])
    first_play = view["must_include"] is not None
    played: list[str] = view["played"]
    # Every card played so far is public, so only the other hands are unseen.
    pool = unseen(BIGTWO_DECK, [*view["hand"], *played])
    counts: list[int] = view["counts"]
    others = [s for s in range(len(counts)) if s != seat]
    dealt = deal_out(pool, [counts[s] for s in others], rng)
    hands = seat_hands(view, seat, others, dealt)
    return BigTwoState(
        options=BigTwoOptions(pass_locks=view["options"]["pass_locks"]),
        seed=0,
        dealt_first=view["dealt_first"],
        hands=tuple(tuple(by_power(h)) for h in hands),
        turn=view["turn"],
        trick=trick,
        passed=frozenset(view["passed"]),
        places=tuple(view["places"]),
        first_play=first_play,
        played=tuple(played),
        last_play=last,
    )


# -- Possession ---------------------------------------------------------------------


#: deals tried for buried pile cards that keep the pile's open run as the view
#: shows it (rarely more than one); past that the last deal stands
AJAR_TRIES = 50


def possession_world(view: View, seat: int, rng: random.Random) -> PossessionState:
    decks: int = view["decks"]
    distinct_option = bool(view["options"]["distinct_suit_sets"])
    rules = Rules(
        seats=view["seats"],
        decks=decks,
        set_limit=view["set_limit"],
        distinct_sets=decks == 1 or distinct_option,
        open_pile=bool(view["options"]["open_pile"]),
        distinct_suit_sets=distinct_option,
    )
    props = [
        Property(id=p["id"], owner=p["owner"], kind=p["kind"], cards=tuple(p["cards"]))
        for p in view["properties"]
    ]
    shown_pile: list[str] = view["pile"]
    seen = [*view["hand"], *shown_pile, *(c for p in props for c in p.cards)]
    pool = unseen(build_deck(decks), seen)
    counts: list[int] = view["counts"]
    others = [s for s in range(view["seats"]) if s != seat]
    sizes = [counts[s] for s in others] + [view["pile_size"] - len(shown_pile), view["stock"]]
    for _ in range(AJAR_TRIES):
        *dealt, buried, stock = deal_out(pool, sizes, rng)
        if rules.open_pile or ajar_depth([*buried, *shown_pile]) == len(shown_pile):
            break  # the buried cards do not lengthen the run the view shows open
    hands = seat_hands(view, seat, others, dealt)
    ids = [int(p.id[1:]) for p in props if p.id[1:].isdigit()]
    return PossessionState(
        rules=rules,
        dealer=view["dealer"],
        starter=view["starter"],
        hands=tuple(tuple(sorted(h, key=sort_key)) for h in hands),
        stock=tuple(stock),
        pile=(*buried, *shown_pile),
        properties=tuple(props),
        next_id=max(ids, default=0) + 1,
        phase=view["phase"],
        turn=view["turn"],
        drawn=view["drawn"],
        turned_over=view["turned_over"],
        folded=tuple(view["folded"]),
        open_season=view["open_season"],
        emptied_by=None,
    )


# -- Posso ---------------------------------------------------------------------------


def _meld(shown: dict[str, Any]) -> Meld:
    cards = tuple(shown["cards"])
    if shown["kind"] == POSSO_RUN:
        low = posso_value(shown["low"] + shown["suit"])
        return Meld(shown["id"], shown["owner"], POSSO_RUN, cards, suit=shown["suit"], low=low)
    rank = posso_value(shown["rank"] + "S")
    return Meld(shown["id"], shown["owner"], shown["kind"], cards, rank=rank)


def posso_world(view: View, seat: int, rng: random.Random) -> PossoState:
    """A world for a hand under way (not during the cut, when nothing is dealt).
    The Possos taken this hand are not in the view and only reach the score
    sheet, so a world counts none."""
    if view["phase"] in (POSSO_CUT, POSSO_OVER):
        raise Unaccounted("no hand is under way")
    o = view["options"]
    opts = PossoOptions(
        decks=o["decks"],
        start_hand=o["start_hand"],
        cutting=o["cutting"],
        dead_card=o["dead_card"],
        no_posso_down=o["no_posso_down"],
        reshuffles=o["reshuffles"],
    )
    seats: int = view["seats"]
    ring = tuple(view["ring"])
    melds = [_meld(m) for m in view["melds"]]
    top = [view["pile_top"]] if view["pile_top"] is not None else []
    seen = [*view["hand"], *top, *(c for m in melds for c in m.cards)]
    pool = unseen(posso_deck(o["decks"]), seen)
    counts: list[int] = view["counts"]
    others = [x for x in range(seats) if x != seat]
    phantoms = [pos for pos, x in enumerate(ring) if x is None]
    buried = view["pile_size"] - len(top)
    markers = len(pool) - sum(counts[x] for x in others) - buried - view["stack_count"]
    if phantoms and markers != len(phantoms):
        raise Unaccounted(f"{markers} cards for {len(phantoms)} phantoms")
    sizes = [counts[x] for x in others] + [1] * len(phantoms) + [buried, view["stack_count"]]
    dealt = deal_out(pool, sizes, rng)
    hands = seat_hands(view, seat, others, dealt[: len(others)])
    marker_cards: list[list[str]] = [[] for _ in ring]
    for pos, cards in zip(phantoms, dealt[len(others) :], strict=False):
        marker_cards[pos] = cards
    posso = view["posso"] or {}
    callers = tuple(posso.get("callers", ()))
    cut = view["cut"]
    ids = [int(m.id[1:]) for m in melds if m.id[1:].isdigit()]
    last = view["last_hand"]
    return PossoState(
        seats=seats,
        options=opts,
        seed=rng.getrandbits(32),  # the seed of reshuffles to come is unknown too
        decks=o["decks"],
        ring=ring,
        hand_no=view["hand_no"],
        dealer=view["dealer"],
        phase=view["phase"],
        turn=ring.index(view["turn"]),
        hands=hands,
        markers=marker_cards,
        stack=dealt[-1],
        pile=[*dealt[-2], *top],
        melds=melds,
        meld_counter=max(ids, default=0),
        down=list(view["down"]),
        totals=list(view["totals"]),
        sheet=list(view["sheet"]),
        possos=[0] * seats,
        cut={k: v for k, v in cut.items() if k not in ("due", "dealer")} if cut else None,
        eligible=tuple(posso.get("eligible", ())),
        answered=callers + tuple(posso.get("passed", ())),
        callers=callers,
        caller=posso.get("caller"),
        dead=view["dead_card"],
        reshuffles=view["reshuffled"],
        last_hand=dict(last) if last else None,
    )


SAMPLERS: dict[str, Sampler] = {
    "posso": posso_world,
    "possum": possum_world,
    "bigtwo": bigtwo_world,
    "possession": possession_world,
}
