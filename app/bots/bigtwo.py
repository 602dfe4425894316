"""A Big Two bot that plays like a careful beginner.

It sees its hand as a plan: the fewest combinations (units) the hand can be
played out in, found by a small memoised search.  A play that is a whole unit
of such a plan costs nothing; a play that breaks one (a card out of a pair, a
straight split for a single) costs the extra units it leaves.  So it:
- goes out whenever a legal play empties its hand;
- leads the unit holding its lowest card, bigger units first (sheds more);
- follows with the cheapest play that costs nothing;
- early in the game, passes rather than break a unit; later it breaks them;
- when the next player is down to one card, blocks singles with its highest.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from app.games.bigtwo.combos import classify
from app.games.bigtwo.order import POWER
from app.games.bigtwo.plays import plays_of_size

Action = dict[str, Any]


@lru_cache(maxsize=1 << 15)
def plan_units(hand: tuple[str, ...]) -> int:
    """The fewest legal combinations that together play out `hand` (power order)."""
    if not hand:
        return 0
    lowest = hand[0]
    best = len(hand)
    for size in (5, 3, 2, 1):
        if size > len(hand):
            continue
        for _, picked in plays_of_size(hand, size):
            if lowest in picked:
                rest = tuple(c for c in hand if c not in picked)
                best = min(best, 1 + plan_units(rest))
    return best


def _strength(cards: list[str]) -> tuple[int, ...]:
    combo = classify(cards)
    return combo.key if combo is not None else (0,)


class BigTwoBot:
    def choose(
        self, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
    ) -> Action:
        hand = tuple(sorted(view["hand"], key=POWER.__getitem__))
        plays = [a for a in legal if a["type"] == "play"]
        passing = next((a for a in legal if a["type"] == "pass"), None)
        if not plays:
            assert passing is not None
            return passing
        for action in plays:
            if len(action["cards"]) == len(hand):
                return action
        counts: list[int] = view["counts"]
        seats = len(counts)
        next_seat = next(
            ((seat + k) % seats for k in range(1, seats) if counts[(seat + k) % seats]), seat
        )
        danger = counts[next_seat] == 1
        before = plan_units(hand)

        def cost(action: Action) -> int:
            chosen = set(action["cards"])
            rest = tuple(c for c in hand if c not in chosen)
            return plan_units(rest) + 1 - before

        if passing is None:  # leading
            lowest = hand[0]
            if danger:
                multi = [a for a in plays if len(a["cards"]) > 1]
                if multi:
                    return min(multi, key=lambda a: (cost(a), _strength(a["cards"])))
                return max(plays, key=lambda a: POWER[a["cards"][0]])
            return min(
                plays,
                key=lambda a: (
                    cost(a),
                    lowest not in a["cards"],
                    -len(a["cards"]),
                    _strength(a["cards"]),
                ),
            )
        if danger and len(plays[0]["cards"]) == 1:
            return max(plays, key=lambda a: POWER[a["cards"][0]])
        best = min(plays, key=lambda a: (cost(a), _strength(a["cards"])))
        early = (
            len(hand) > 6
            and min((n for s, n in enumerate(counts) if s != seat and n), default=0) > 3
        )
        if cost(best) > 0 and early:
            return passing
        return best
