"""What makes a property, what may extend one, and what the table can see.

These are the rules both `apply` (to refuse) and the move lister (to offer)
rely on, so they live in one place: a move is listed exactly when these
functions accept it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise

from app.games.cards import RANKS, SUIT_SYMBOLS, SUITS, card_text, make, rank, suit
from app.games.possession.model import RUN, SET, Property, Rules

ACE, KING = 1, 13


def rank_name(r: int) -> str:
    return RANKS[r - 1]


def new_property_kind(cards: Sequence[str], rules: Rules) -> str | None:
    """`set` or `run` when `cards` may be laid as a new property, else None."""
    if len(cards) < 3:
        return None
    ranks = [rank(c) for c in cards]
    suits = [suit(c) for c in cards]
    if len(set(ranks)) == 1:
        if len(cards) > 4:
            return None
        if rules.distinct_sets and len(set(suits)) != len(suits):
            return None
        return SET
    if len(set(suits)) == 1 and is_consecutive(ranks):
        return RUN
    return None


def why_not_property(cards: Sequence[str], rules: Rules) -> str:
    """A player-facing reason for `new_property_kind` saying None.  It names
    only cards the player chose, which they can see anyway."""
    shown = " ".join(cards)
    if len(cards) < 3:
        return f"a property needs at least 3 cards, not {len(cards)} ({shown})"
    ranks = [rank(c) for c in cards]
    if len(set(ranks)) == 1:
        if len(cards) > 4:
            return f"a new set is 3 or 4 cards, not {len(cards)}; add more later"
        return f"{shown}: sets in this game need different suits"
    if len({suit(c) for c in cards}) == 1:
        return f"{shown}: a sequence needs consecutive ranks, A low to K high, no repeats"
    return f"{shown} is neither a set of one rank nor a sequence in one suit"


def is_consecutive(ranks: Iterable[int]) -> bool:
    ordered = sorted(ranks)
    return all(b == a + 1 for a, b in pairwise(ordered))


def run_ends(prop: Property) -> tuple[int, int]:
    return rank(prop.cards[0]), rank(prop.cards[-1])


def extension_problem(prop: Property, add: Sequence[str], rules: Rules) -> tuple[str, str] | None:
    """(code, message) saying why `add` cannot join `prop`, or None if it can."""
    if prop.kind == SET:
        return _set_problem(prop, add, rules)
    return _run_problem(prop, add)


def _set_problem(prop: Property, add: Sequence[str], rules: Rules) -> tuple[str, str] | None:
    r = rank(prop.cards[0])
    for c in add:
        if rank(c) != r:
            return "does_not_fit", f"{card_text(c)} cannot join a set of {rank_name(r)}s"
    if len(prop.cards) + len(add) > rules.set_limit:
        return "set_full", (
            f"a set holds at most {rules.set_limit} cards; {prop.id} has {len(prop.cards)}"
        )
    if rules.distinct_sets:
        suits = [suit(c) for c in (*prop.cards, *add)]
        if len(set(suits)) != len(suits):
            return "does_not_fit", "sets in this game need different suits"
    return None


def _run_problem(prop: Property, add: Sequence[str]) -> tuple[str, str] | None:
    s = suit(prop.cards[0])
    lo, hi = run_ends(prop)
    for c in add:
        if suit(c) != s:
            sym = SUIT_SYMBOLS[s]
            return "does_not_fit", f"{card_text(c)} is not {sym}: {prop.id} is a {sym} sequence"
    ranks = [rank(c) for c in add]
    if len(set(ranks)) != len(ranks):
        return "not_consecutive", "the same rank twice cannot extend a sequence"
    for c, r in zip(add, ranks, strict=True):
        if lo <= r <= hi:
            return "does_not_fit", f"{prop.id} already holds {card_text(c)}"
    below = sorted(r for r in ranks if r < lo)
    above = sorted(r for r in ranks if r > hi)
    if below and above:
        return "one_end_only", (
            "a sequence grows at one end per turn: the cards must be consecutive and "
            "join the same end (the other end takes another turn)"
        )
    # An ace (king) alone that cannot join the low (high) end was meant to
    # follow K (come before A); with other cards beside it, it was meant to
    # join them, and the fault is a gap.
    if below and below != list(range(lo - len(below), lo)):
        if hi == KING and below == [ACE] and lo > 2:
            return "no_wrap", "A is low only: nothing follows K (sequences run A to K, no wrap)"
        return "not_consecutive", (
            f"cards below {rank_name(lo)}{s} must run down from {rank_name(lo - 1)}{s}"
            if lo > ACE
            else f"nothing comes before A{s}: sequences start at A"
        )
    if above and above != list(range(hi + 1, hi + 1 + len(above))):
        if lo == ACE and above == [KING] and hi < KING - 1:
            return (
                "no_wrap",
                "K is high only: nothing comes before A (sequences run A to K, no wrap)",
            )
        return "not_consecutive", (
            f"cards above {rank_name(hi)}{s} must run up from {rank_name(hi + 1)}{s}"
            if hi < KING
            else f"nothing follows K{s}: sequences end at K"
        )
    return None


def ordered_property(kind: str, cards: Iterable[str]) -> tuple[str, ...]:
    """The canonical order of a property's cards: runs low to high, sets by suit."""
    if kind == RUN:
        return tuple(sorted(cards, key=rank))
    return tuple(sorted(cards, key=lambda c: SUITS.index(suit(c))))


def property_counts(props: Iterable[Property]) -> Counter[str]:
    out: Counter[str] = Counter()
    for p in props:
        out.update(p.cards)
    return out


def is_secured(prop: Property, in_props: Counter[str], rules: Rules) -> bool:
    """True when no card could ever extend `prop`, judged from the table alone.

    Cards in properties never return to a hand, so they are the only ones known
    to be out of reach; a card in the pile, the stock or any hand (even a
    folded one, which nobody else has seen) might still turn up.
    """
    copies = rules.decks
    if prop.kind == SET:
        if len(prop.cards) >= rules.set_limit:
            return True
        r = rank(prop.cards[0])
        if rules.distinct_sets:
            have = {suit(c) for c in prop.cards}
            return all(in_props[make(r, s)] >= copies for s in SUITS if s not in have)
        return all(in_props[make(r, s)] >= copies for s in SUITS)
    s = suit(prop.cards[0])
    lo, hi = run_ends(prop)
    low_open = lo > ACE and in_props[make(lo - 1, s)] < copies
    high_open = hi < KING and in_props[make(hi + 1, s)] < copies
    return not (low_open or high_open)


def ajar_runs(pile: Sequence[str]) -> tuple[int, int]:
    """How deep the top of the pile runs (top included) as one rank, and as one
    suit with distinct ranks.  Only these cards can join a new property."""
    if not pile:
        return 0, 0
    top = pile[-1]
    r, s = rank(top), suit(top)
    by_rank = 1
    while by_rank < len(pile) and rank(pile[-1 - by_rank]) == r:
        by_rank += 1
    seen = {r}
    by_suit = 1
    while by_suit < len(pile):
        c = pile[-1 - by_suit]
        if suit(c) != s or rank(c) in seen:
            break
        seen.add(rank(c))
        by_suit += 1
    return by_rank, by_suit


def ajar_depth(pile: Sequence[str]) -> int:
    """How many pile cards, from the top, everyone may see (the ajar run)."""
    return max(ajar_runs(pile))
