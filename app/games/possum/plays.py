"""Turning value patterns into concrete plays of a hand.

A play is a multiset of cards plus the card that ends on top.  Orders that
leave the same multiset and the same top card are the same action, so each
(multiset, top code) pair is listed once: the other cards in hand order, then
the top.  With two decks identical cards are interchangeable, so multisets are
of codes, not of physical copies.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from itertools import product

from app.games import cards
from app.games.possum.model import PossumOptions
from app.games.possum.patterns import candidates


def value(code: str) -> int:
    return cards.rank(code)


def hand_key(code: str) -> tuple[int, str]:
    """Hands read by value, then suit."""
    return (cards.rank(code), code[-1])


def value_counts(hand: Sequence[str]) -> Counter[int]:
    return Counter(cards.rank(c) for c in hand)


def _sub_multisets(
    codes: list[tuple[str, int]], size: int, start: int = 0
) -> Iterator[tuple[str, ...]]:
    """Multisets of `size` codes from (code, copies) pairs."""
    if size == 0:
        yield ()
        return
    for i in range(start, len(codes)):
        code, copies = codes[i]
        for take in range(min(copies, size), 0, -1):
            for rest in _sub_multisets(codes, size - take, i + 1):
                yield (code,) * take + rest


def legal_plays(hand: Sequence[str], top: int, options: PossumOptions) -> list[list[str]]:
    """Every play of `hand` against `top`, as card lists in pile order."""
    by_value: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for code, copies in sorted(Counter(hand).items(), key=lambda kv: hand_key(kv[0])):
        by_value[value(code)].append((code, copies))
    out: list[list[str]] = []
    for values in candidates(value_counts(hand), top, options):
        need = Counter(values)
        choices = [list(_sub_multisets(by_value[v], k)) for v, k in sorted(need.items())]
        for parts in product(*choices):
            chosen = sorted((c for part in parts for c in part), key=hand_key)
            for top_code in dict.fromkeys(chosen):
                rest = list(chosen)
                rest.remove(top_code)
                out.append([*rest, top_code])
    return out
