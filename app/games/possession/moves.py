"""Every legal put-down for a hand, listed without trial and error.

The lists are built from the same shapes `combos` checks (sets by rank,
sequences as intervals of one suit), so they stay fast even in a showdown
with many properties on the table; the test suite cross-checks them against
a brute-force search through `apply`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from itertools import combinations

from app.games.base import Action
from app.games.cards import make, rank, suit
from app.games.possession.combos import ACE, KING, ajar_runs, run_ends
from app.games.possession.model import SET, Property, Rules


def unique_combos(cards: Sequence[str], size: int) -> Iterator[tuple[str, ...]]:
    """Combinations of `size` cards, each distinct choice once even when the
    hand holds identical cards (two decks)."""
    seen: set[tuple[str, ...]] = set()
    for combo in combinations(cards, size):
        if combo not in seen:
            seen.add(combo)
            yield combo


def _suits_distinct(cards: Sequence[str]) -> bool:
    return len({suit(c) for c in cards}) == len(cards)


def meld_actions(hand: Sequence[str], pile: Sequence[str], rules: Rules) -> list[Action]:
    out: list[Action] = []
    by_rank: dict[int, list[str]] = defaultdict(list)
    by_suit: dict[str, set[int]] = defaultdict(set)
    for c in hand:
        by_rank[rank(c)].append(c)
        by_suit[suit(c)].add(rank(c))
    deep_rank, deep_suit = ajar_runs(pile)

    for r in sorted(by_rank):
        for size in (3, 4):
            for combo in unique_combos(by_rank[r], size):
                if not rules.distinct_sets or _suits_distinct(combo):
                    out.append({"type": "meld", "cards": list(combo), "from_pile": 0})
    if pile:
        top_rank = rank(pile[-1])
        mine = by_rank.get(top_rank, [])
        for k in range(1, deep_rank + 1):
            laid = pile[len(pile) - k :]
            for size in (3 - k, 4 - k):
                if size < 1:
                    continue
                for combo in unique_combos(mine, size):
                    if not rules.distinct_sets or _suits_distinct((*laid, *combo)):
                        out.append({"type": "meld", "cards": list(combo), "from_pile": k})

    for s in sorted(by_suit):
        for lo, hi in _intervals(by_suit[s], set()):
            out.append(
                {"type": "meld", "cards": [make(r, s) for r in range(lo, hi + 1)], "from_pile": 0}
            )
    if pile:
        s = suit(pile[-1])
        for k in range(1, deep_suit + 1):
            from_pile = {rank(c) for c in pile[len(pile) - k :]}
            for lo, hi in _intervals(by_suit.get(s, set()), from_pile):
                cards = [make(r, s) for r in range(lo, hi + 1) if r not in from_pile]
                out.append({"type": "meld", "cards": cards, "from_pile": k})
    return out


def _intervals(hand_ranks: set[int], pile_ranks: set[int]) -> Iterator[tuple[int, int]]:
    """Runs of 3+ consecutive ranks covered by hand and pile ranks that hold
    every pile rank and at least one hand rank."""
    cover = hand_ranks | pile_ranks
    if pile_ranks:
        low, high = min(pile_ranks), max(pile_ranks)
        if any(r not in cover for r in range(low, high + 1)):
            return
        bottom = low
        while bottom - 1 >= ACE and bottom - 1 in cover:
            bottom -= 1
        top = high
        while top + 1 <= KING and top + 1 in cover:
            top += 1
        for lo in range(bottom, low + 1):
            for hi in range(high, top + 1):
                if hi - lo + 1 >= 3 and hi - lo + 1 > len(pile_ranks):
                    yield lo, hi
        return
    ordered = sorted(cover)
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        block_lo, block_hi = ordered[start], ordered[end]
        for lo in range(block_lo, block_hi + 1):
            for hi in range(lo + 2, block_hi + 1):
                yield lo, hi
        start = end + 1


def extend_actions(hand: Sequence[str], props: Sequence[Property], rules: Rules) -> list[Action]:
    out: list[Action] = []
    by_rank: dict[int, list[str]] = defaultdict(list)
    by_suit: dict[str, set[int]] = defaultdict(set)
    for c in hand:
        by_rank[rank(c)].append(c)
        by_suit[suit(c)].add(rank(c))
    for p in props:
        if p.kind == SET:
            mine = by_rank.get(rank(p.cards[0]), [])
            room = rules.set_limit - len(p.cards)
            for size in range(1, min(room, len(mine)) + 1):
                for combo in unique_combos(mine, size):
                    if not rules.distinct_sets or _suits_distinct((*p.cards, *combo)):
                        out.append({"type": "extend", "property": p.id, "cards": list(combo)})
            continue
        s = suit(p.cards[0])
        have = by_suit.get(s, set())
        lo, hi = run_ends(p)
        r = lo - 1
        while r >= ACE and r in have:
            out.append(
                {"type": "extend", "property": p.id, "cards": [make(x, s) for x in range(r, lo)]}
            )
            r -= 1
        r = hi + 1
        while r <= KING and r in have:
            out.append(
                {
                    "type": "extend",
                    "property": p.id,
                    "cards": [make(x, s) for x in range(hi + 1, r + 1)],
                }
            )
            r += 1
    return out
