"""Finding a way to go down: one valid arrangement of a hand, if any exists.

Bots and `legal_actions` need this on every turn, so it must be exact (never
miss an arrangement that exists) and quick on hands of 30+ cards.  The search
is over *shapes*, not cards: a run is (suit, first value, length) and a set is
a rank, and a shape's best filling follows from counts:

- a run uses every natural it covers and wilds for the gaps;
- runs in one requirement never share a suit, so a natural can be wanted by
  at most one run and by the sets of its rank.  Such a "contested" card goes
  to the sets only when they lack naturals (fewer than half their cards) and
  the run can spare it; either way the total number of wilds is the same.

Among the arrangements it prefers those laying the fewest wilds (a wild kept in
hand fits anywhere once down), trying shapes in that order and stopping when no
later one can do better.

Hand ten has no sets and must use every card, which fixes the suits and the
naturals of each run outright; only the lengths (how the wilds spread) vary.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import combinations, combinations_with_replacement
from typing import Any

from app.games.cards import JOKER
from app.games.posso.rules import (
    FULL_RUN,
    HIGHEST,
    LOWEST,
    REQUIREMENTS,
    RUN,
    SET,
    SUITS,
    Requirement,
    is_wild,
    natural,
    value,
)

Plan = tuple[tuple[str, tuple[str, ...]], ...]
RunShape = tuple[int, str, int, int]  # (naturals present, suit, low, length)


def find_go_down(hand: list[str], hand_no: int) -> list[dict[str, Any]] | None:
    """Melds (`{"kind", "cards"}`, runs low to high) laying hand `hand_no`'s
    requirement from `hand`, or None when no arrangement exists."""
    if hand_no not in REQUIREMENTS:
        raise ValueError(f"there is no hand {hand_no}")
    plan = _find(tuple(sorted(hand)), hand_no)
    if plan is None:
        return None
    return [{"kind": kind, "cards": list(cards)} for kind, cards in plan]


@lru_cache(maxsize=4096)
def _find(hand: tuple[str, ...], hand_no: int) -> Plan | None:
    req = REQUIREMENTS[hand_no]
    # 2s before jokers: a 2 left in hand costs 20 points, a joker nothing
    wilds = sorted((c for c in hand if is_wild(c)), key=lambda c: c == JOKER)
    naturals = Counter(c for c in hand if not is_wild(c))
    if req.all_cards:
        return _every_card_runs(req, naturals, wilds)
    return _search(req, naturals, wilds)


def _every_card_runs(req: Requirement, naturals: Counter[str], wilds: list[str]) -> Plan | None:
    by_suit: dict[str, list[int]] = {}
    for code, n in naturals.items():
        if n > 1:
            return None  # two of one card cannot both sit in runs of distinct suits
        by_suit.setdefault(code[-1], []).append(value(code))
    if len(by_suit) != len(req.runs):
        return None
    plans: list[tuple[str, list[int], int, int]] = []
    for suit, vals in sorted(by_suit.items()):
        vals.sort()
        span = vals[-1] - vals[0] + 1
        shortest = max(min(req.runs), span)
        longest = min(FULL_RUN, 2 * len(vals))  # at most half wild
        if shortest > longest:
            return None
        plans.append((suit, vals, shortest, longest))
    cards_needed = len(wilds) + sum(len(p[1]) for p in plans)
    if not sum(p[2] for p in plans) <= cards_needed <= sum(p[3] for p in plans):
        return None
    spare = cards_needed - sum(p[2] for p in plans)
    pool = list(wilds)
    out: list[tuple[str, tuple[str, ...]]] = []
    for suit, vals, shortest, longest in plans:
        grow = min(spare, longest - shortest)
        spare -= grow
        length = shortest + grow
        low = min(vals[0], HIGHEST - length + 1)
        present = set(vals)
        run = tuple(
            natural(v, suit) if v in present else pool.pop(0) for v in range(low, low + length)
        )
        out.append((RUN, run))
    return tuple(out)


def _run_shapes(length: int, have: Counter[tuple[int, str]], wilds: int) -> list[RunShape]:
    shapes: list[RunShape] = []
    for suit in SUITS:
        present = [1 if have[(v, suit)] else 0 for v in range(LOWEST, HIGHEST + 1)]
        count = sum(present[:length])
        for start in range(FULL_RUN - length + 1):
            if start:
                count += present[start + length - 1] - present[start - 1]
            if count * 2 >= length and length - count <= wilds:
                shapes.append((count, suit, LOWEST + start, length))
    shapes.sort(key=lambda s: -s[0])
    return shapes


def _search(req: Requirement, naturals: Counter[str], wilds: list[str]) -> Plan | None:
    have: Counter[tuple[int, str]] = Counter()
    per_value: Counter[int] = Counter()
    for code, n in naturals.items():
        have[(value(code), code[-1])] += n
        per_value[value(code)] += n
    n_wild = len(wilds)
    run_sizes = req.runs
    set_sizes = req.sets
    assert len(set(set_sizes)) <= 1, "sets in one requirement share a size"
    assert len(run_sizes) <= 1 or req.distinct_suits, "several runs need distinct suits"
    size = set_sizes[0] if set_sizes else 0
    set_ranks = sorted(
        (v for v, n in per_value.items() if n + min(n_wild, size // 2) >= size),
        key=lambda v: -per_value[v],
    )
    if set_sizes and not set_ranks:
        return None
    total = sum(n for _, n in req.melds)
    shape_lists = [_run_shapes(n, have, n_wild) for n in run_sizes]
    if any(not s for s in shape_lists):
        return None
    rank_choices = _rank_combos(set_ranks, len(set_sizes), size, per_value)
    best: tuple[int, tuple[RunShape, ...], tuple[int, ...], frozenset[tuple[int, int]]] | None
    best = None
    for runs in _run_combos(shape_lists):
        run_wilds = sum(n - a for a, _, _, n in runs)
        if run_wilds > n_wild:
            continue
        if best is not None and run_wilds >= best[0]:
            break  # run combos come fewest wilds first: nothing later can do better
        for ranks in rank_choices:
            fit = _fit(runs, ranks, size, have, per_value, n_wild, total)
            if fit is not None:
                given, wilds_used = fit
                if best is None or wilds_used < best[0]:
                    best = (wilds_used, runs, ranks, given)
                break
    if best is None:
        return None
    _, runs, ranks, given = best
    return _build(runs, ranks, size, given, naturals, wilds)


def _rank_combos(
    ranks: list[int], count: int, size: int, per_value: Counter[int]
) -> list[tuple[int, ...]]:
    """Ranks for the sets, those needing the fewest wilds first: laying naturals
    keeps wilds in hand, where they fit anything later."""
    if count == 0:
        return [()]

    def wilds_needed(combo: tuple[int, ...]) -> int:
        need = 0
        for i, v in enumerate(combo):  # combos are sorted: equal ranks sit together
            if i == 0 or combo[i - 1] != v:
                need += max(0, combo.count(v) * size - per_value[v])
        return need

    return sorted(combinations_with_replacement(ranks, count), key=wilds_needed)


def _run_combos(shape_lists: list[list[RunShape]]) -> list[tuple[RunShape, ...]]:
    if not shape_lists:
        return [()]
    if len(shape_lists) == 1:
        return [(s,) for s in shape_lists[0]]
    first, second = shape_lists  # at most two runs outside hand ten, in distinct suits
    combos: list[tuple[RunShape, ...]] = [(a, b) for a in first for b in second if a[1] != b[1]]
    if first == second:  # equal sizes: (a, b) and (b, a) are the same pair
        combos = [(a, b) for a, b in combinations(first, 2) if a[1] != b[1]]
    combos.sort(key=lambda p: sum(shape[3] - shape[0] for shape in p))
    return combos


def _fit(
    runs: tuple[RunShape, ...],
    ranks: tuple[int, ...],
    size: int,
    have: Counter[tuple[int, str]],
    per_value: Counter[int],
    n_wild: int,
    total: int,
) -> tuple[frozenset[tuple[int, int]], int] | None:
    """The contested cards (run index, value) handed to the sets and the wilds
    the whole lay-down needs, or None if this shape cannot be filled."""
    half_up = (size + 1) // 2
    used = sum(a for a, _, _, _ in runs)
    wants: list[tuple[int, int, list[int]]] = []  # (value, deficit, runs it can come from)
    for v, m in Counter(ranks).items():
        contested = [
            i for i, (_, suit, low, n) in enumerate(runs) if low <= v < low + n and have[(v, suit)]
        ]
        free = per_value[v] - len(contested)
        deficit = max(0, m * half_up - free)
        if deficit > len(contested):
            return None
        used += free if deficit else min(m * size, free)
        if deficit:
            wants.append((v, deficit, contested))
    if total - used > n_wild:
        return None
    slack = [a - (n + 1) // 2 for a, _, _, n in runs]
    given = _assign(wants, slack, frozenset())
    return None if given is None else (given, total - used)


def _assign(
    wants: list[tuple[int, int, list[int]]], slack: list[int], given: frozenset[tuple[int, int]]
) -> frozenset[tuple[int, int]] | None:
    if not wants:
        return given
    (v, deficit, contested), rest = wants[0], wants[1:]
    for donors in combinations(contested, deficit):
        if all(slack[i] > 0 for i in donors):
            left = [s - (i in donors) for i, s in enumerate(slack)]
            found = _assign(rest, left, given | {(i, v) for i in donors})
            if found is not None:
                return found
    return None


def _build(
    runs: tuple[RunShape, ...],
    ranks: tuple[int, ...],
    size: int,
    given: frozenset[tuple[int, int]],
    naturals: Counter[str],
    wilds: list[str],
) -> Plan:
    pool = Counter(naturals)
    spare = list(wilds)
    out: list[tuple[str, tuple[str, ...]]] = []
    for i, (_, suit, low, n) in enumerate(runs):
        run: list[str] = []
        for v in range(low, low + n):
            code = natural(v, suit)
            if pool[code] and (i, v) not in given:
                pool[code] -= 1
                run.append(code)
            else:
                run.append(spare.pop(0))
        out.append((RUN, tuple(run)))
    half_up = (size + 1) // 2
    for v, m in sorted(Counter(ranks).items()):
        nats = [c for c in sorted(pool) if value(c) == v for _ in range(pool[c])]
        nats = nats[: m * size]
        sets: list[list[str]] = [nats[k * half_up : (k + 1) * half_up] for k in range(m)]
        for c in nats[m * half_up :]:
            next(s for s in sets if len(s) < size).append(c)
        for c in nats:
            pool[c] -= 1
        for s in sets:
            while len(s) < size:
                s.append(spare.pop(0))
            out.append((SET, tuple(s)))
    return tuple(out)
