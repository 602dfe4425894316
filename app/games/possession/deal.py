"""The deal and the decision of who starts.

Dealing follows docs/cards.md (Dealing) exactly (one card at a time clockwise from the
dealer's left, then the upturn, then the stock), so a stacked deck in a test or
a replay lands where its author expects.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.games.cards import build_deck, deal_clockwise, rank, rng_for, sort_key, stacked, suit
from app.games.possession.model import (
    HAND_SIZE,
    PLAY,
    PossessionOptions,
    PossessionState,
    Rules,
)

#: sorts after every real distance, so a further card beats having none
_NO_CARD = 99


def rules_for(seats: int, opts: PossessionOptions) -> Rules:
    decks = 2 if seats == 4 else 1
    distinct = decks == 1 or opts.distinct_suit_sets
    return Rules(
        seats=seats,
        decks=decks,
        set_limit=4 if distinct else 8,
        distinct_sets=distinct,
        open_pile=opts.open_pile,
        distinct_suit_sets=opts.distinct_suit_sets,
    )


def deal(
    seats: int, opts: PossessionOptions, seed: int, deck: Sequence[str] | None, dealer: int
) -> PossessionState:
    rules = rules_for(seats, opts)
    order = stacked(build_deck(rules.decks), deck, rng_for(seed, "deal"))
    hands = deal_clockwise(order, seats, dealer, HAND_SIZE)
    upturn = order[HAND_SIZE * seats]
    stock = tuple(reversed(order[HAND_SIZE * seats + 1 :]))
    sorted_hands = tuple(tuple(sorted(h, key=sort_key)) for h in hands)
    first = starting_seat(sorted_hands, upturn, dealer)
    return PossessionState(
        rules=rules,
        dealer=dealer,
        starter=first,
        hands=sorted_hands,
        stock=stock,
        pile=(upturn,),
        properties=(),
        next_id=1,
        phase=PLAY,
        turn=first,
        drawn=False,
        turned_over=False,
        folded=(),
        open_season=False,
        emptied_by=None,
    )


def nearness(hand: Sequence[str], upturn: str) -> tuple[int, tuple[int, ...]]:
    """A sort key for the start decision: smaller is nearer.

    Most cards of the upturned rank first; then the distances of the cards of
    the upturned suit, nearest first, compared one by one.  The sentinel at the
    end makes a list that goes on beat a list that has stopped.
    """
    r, s = rank(upturn), suit(upturn)
    same_rank = sum(1 for c in hand if rank(c) == r)
    distances = sorted(abs(rank(c) - r) for c in hand if suit(c) == s)
    return -same_rank, (*distances, _NO_CARD)


def starting_seat(hands: Sequence[Sequence[str]], upturn: str, dealer: int) -> int:
    seats = len(hands)
    clockwise = [(dealer + 1 + i) % seats for i in range(seats)]
    # min() keeps the first of equal keys: the first tied seat from the dealer's left
    return min(clockwise, key=lambda seat: nearness(hands[seat], upturn))
