"""Melds on the table and the checks for laying, extending and swapping them.

A run remembers its suit and the value its first card stands on (`low`), so a
wild's meaning is simply its position: nothing else needs storing, and swapping
a wild for "the natural it stands for" is a lookup.  Melds are frozen: a change
makes a new one, so states can share them between copies.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from app.games.base import IllegalAction
from app.games.posso.rules import (
    FULL_RUN,
    HIGHEST,
    LOWEST,
    RUN,
    SET,
    is_wild,
    natural,
    value,
    value_text,
)

LOW = "low"
HIGH = "high"


@dataclass(frozen=True)
class Meld:
    id: str
    owner: int
    kind: str
    cards: tuple[str, ...]
    suit: str = ""  # runs
    low: int = 0  # runs: the value the first card stands on
    rank: int = 0  # sets: the value every natural shares

    @property
    def high(self) -> int:
        return self.low + len(self.cards) - 1

    @property
    def full(self) -> bool:
        return self.kind == RUN and len(self.cards) >= FULL_RUN

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "owner": self.owner,
            "kind": self.kind,
            "cards": list(self.cards),
        }
        if self.kind == RUN:
            out.update(
                suit=self.suit,
                low=value_text(self.low),
                high=value_text(self.high),
                full=self.full,
            )
        else:
            out["rank"] = value_text(self.rank)
        return out


def _wild_limit(cards: list[str]) -> None:
    wilds = sum(1 for c in cards if is_wild(c))
    if wilds * 2 > len(cards):
        raise IllegalAction(
            "too_many_wilds",
            f"a meld laid to go down may be at most half wild: {wilds} of {len(cards)} are wild",
        )


def check_set(cards: list[str], *, going_down: bool) -> int:
    """The value a set's naturals share; raises if `cards` are not one."""
    naturals = [c for c in cards if not is_wild(c)]
    if not naturals:
        raise IllegalAction("too_many_wilds", "a set needs at least one natural card")
    ranks = {value(c) for c in naturals}
    if len(ranks) != 1:
        raise IllegalAction(
            "bad_set", f"a set holds cards of one rank (plus wilds): {' '.join(cards)}"
        )
    if going_down:
        _wild_limit(cards)
    return ranks.pop()


def run_layout(cards: list[str]) -> tuple[str, int]:
    """(suit, low) for cards listed low to high as a run; raises if they are not one."""
    naturals = [(i, c) for i, c in enumerate(cards) if not is_wild(c)]
    if not naturals:
        raise IllegalAction("too_many_wilds", "a run needs at least one natural card")
    suits = {c[-1] for _, c in naturals}
    if len(suits) != 1:
        raise IllegalAction(
            "run_mixed_suits", f"a run is all one suit (wilds aside): {' '.join(cards)}"
        )
    first_i, first = naturals[0]
    low = value(first) - first_i
    for i, c in naturals:
        if value(c) != low + i:
            raise IllegalAction(
                "bad_run",
                "a run's cards must be consecutive and listed low to high, wilds where "
                f"they stand: {' '.join(cards)}",
            )
    if low < LOWEST or low + len(cards) - 1 > HIGHEST:
        raise IllegalAction(
            "bad_run", f"a run goes from 3 up to A, no further: {' '.join(cards)} does not fit"
        )
    return suits.pop(), low


def new_meld(mid: str, owner: int, kind: str, cards: list[str]) -> Meld:
    """A meld laid to go down (wild limit applies)."""
    if kind == SET:
        return Meld(mid, owner, SET, tuple(cards), rank=check_set(cards, going_down=True))
    suit, low = run_layout(cards)
    _wild_limit(cards)
    return Meld(mid, owner, RUN, tuple(cards), suit=suit, low=low)


def extend(meld: Meld, cards: list[str], end: str | None) -> tuple[Meld, str | None]:
    """`meld` with `cards` played on it, and the end they joined (None for sets)."""
    if meld.kind == SET:
        if end is not None:
            raise IllegalAction("bad_action", "'end' is only for runs; a set has no ends")
        for c in cards:
            if not is_wild(c) and value(c) != meld.rank:
                raise IllegalAction(
                    "does_not_fit", f"{c} does not fit a set of {value_text(meld.rank)}s"
                )
        return replace(meld, cards=meld.cards + tuple(cards)), None
    if meld.full:
        raise IllegalAction("run_full", f"run {meld.id} is full (3 to A): nothing more fits")
    n = len(cards)
    ends = [end] if end is not None else [HIGH, LOW]
    for e in ends:
        low = meld.high + 1 if e == HIGH else meld.low - n
        if low < LOWEST or low + n - 1 > HIGHEST:
            continue
        if all(is_wild(c) or c == natural(low + i, meld.suit) for i, c in enumerate(cards)):
            if e == HIGH:
                return replace(meld, cards=meld.cards + tuple(cards)), HIGH
            return replace(meld, cards=tuple(cards) + meld.cards, low=low), LOW
    where = f"the {end} end of" if end is not None else "either end of"
    raise IllegalAction(
        "does_not_fit",
        f"{' '.join(cards)} cannot join {where} run {meld.id} "
        f"({value_text(meld.low)}..{value_text(meld.high)} of {meld.suit}), "
        "listed low to high as they would stand",
    )


def swap(meld: Meld, card: str, to: str) -> tuple[Meld, str]:
    """`meld` with the wild standing for `card` replaced by it and moved to end
    `to`; returns the new meld and the wild's code."""
    if meld.kind != RUN:
        raise IllegalAction("set_wilds_stay", "wilds in a set are never swapped")
    if is_wild(card):
        raise IllegalAction("bad_swap", "swap a wild for a natural card, not for another wild")
    if meld.full:
        raise IllegalAction(
            "run_full", f"run {meld.id} is full (3 to A): its wilds have nowhere to move"
        )
    pos = value(card) - meld.low
    if card[-1] != meld.suit or not 0 <= pos < len(meld.cards) or not is_wild(meld.cards[pos]):
        raise IllegalAction("no_wild_there", f"no wild in run {meld.id} stands for {card}")
    if to == HIGH and meld.high >= HIGHEST:
        raise IllegalAction("no_room", f"run {meld.id} already reaches A: move the wild low")
    if to == LOW and meld.low <= LOWEST:
        raise IllegalAction("no_room", f"run {meld.id} already starts at 3: move the wild high")
    wild = meld.cards[pos]
    cards = list(meld.cards)
    cards[pos] = card
    if to == HIGH:
        return replace(meld, cards=(*cards, wild)), wild
    return replace(meld, cards=(wild, *cards), low=meld.low - 1), wild
