"""Which picks of cards make a meld the engine would lay to go down, asked of
the engine itself (`new_meld` and the hand's sizes), and random picks to ask
about: the judge the tables' and the engine's own meld lists are checked
against."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from app.games.base import IllegalAction
from app.games.posso.melds import new_meld
from app.games.posso.rules import HIGHEST, LOWEST, REQUIREMENTS, RUN, SET, is_wild, value


def layable(kind: str, picked: list[str], hand_no: int) -> bool:
    """Would the engine lay `picked` as a meld of `kind` to go down in this
    hand, in some order?  A run is tried on every window it could stand on."""
    if len(picked) not in REQUIREMENTS[hand_no].sizes(kind):
        return False
    tries = [picked] if kind == SET else list(run_orders(picked))
    for cards in tries:
        try:
            new_meld("", 0, kind, cards)
        except IllegalAction:
            continue
        return True
    return False


def run_orders(picked: list[str]) -> Any:
    """`picked` laid low to high from each starting value, naturals where they
    stand and wilds in the gaps (orders that cannot be are skipped)."""
    wilds = [c for c in picked if is_wild(c)]
    naturals = [c for c in picked if not is_wild(c)]
    size = len(picked)
    for low in range(LOWEST, HIGHEST - size + 2):
        places: list[str | None] = [None] * size
        for c in naturals:
            i = value(c) - low
            if not 0 <= i < size or places[i] is not None:
                break
            places[i] = c
        else:
            spare = iter(wilds)
            yield [c if c is not None else next(spare) for c in places]


def meld_picks(rng: random.Random, hand: list[str], hand_no: int) -> list[list[str]]:
    """Random subsets, and subsets shaped like the hand's melds (one rank, or
    one suit's cards in a window of a size the hand lays, wilds making up the
    size), sometimes a card short or over: random subsets are rarely melds."""
    out = [rng.sample(hand, rng.randint(1, min(len(hand), 9))) for _ in range(30)]
    wilds = [c for c in hand if is_wild(c)]
    naturals = [c for c in hand if not is_wild(c)]
    req = REQUIREMENTS[hand_no]
    kinds = [k for k in (SET, RUN) if req.sizes(k)]
    for _ in range(60):
        if not naturals:
            break
        pivot = rng.choice(naturals)
        kind = rng.choice(kinds)
        size = rng.choice(req.sizes(kind))
        if kind == SET:
            group = [c for c in naturals if value(c) == value(pivot)]
        else:
            low = rng.randint(max(LOWEST, value(pivot) - size + 1), value(pivot))
            near = [c for c in naturals if c[-1] == pivot[-1] and low <= value(c) < low + size]
            group = list({value(c): c for c in near}.values())
        chosen = rng.sample(group, min(len(group), size))
        chosen += rng.sample(wilds, min(len(wilds), size - len(chosen)))
        nudge = rng.random()
        if nudge < 0.15 and len(chosen) > 1:
            chosen.pop(rng.randrange(len(chosen)))
        elif nudge < 0.3 and (rest := list((Counter(hand) - Counter(chosen)).elements())):
            chosen.append(rng.choice(rest))
        out.append(chosen)
    return out
