"""Melds on the table and the checks for laying, extending and swapping them.

A run remembers its suit and the value its first card stands on (`low`), so a
wild's meaning is simply its position: nothing else needs storing, and swapping
a wild for "the natural it stands for" is a lookup.  Melds are frozen: a change
makes a new one, so states can share them between copies.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

from app.games.base import IllegalAction
from app.games.cards import SUIT_SYMBOLS, card_text, cards_text
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

WILDS = "twos and jokers are wild"

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
            f"{cards_text(cards)}: a meld laid to go down may be at most half wild, "
            f"and {wilds} of its {len(cards)} cards are wild",
        )


def check_set(cards: list[str], *, going_down: bool) -> int:
    """The value a set's naturals share; raises if `cards` are not one."""
    naturals = [c for c in cards if not is_wild(c)]
    if not naturals:
        raise IllegalAction(
            "too_many_wilds", f"{cards_text(cards)}: a set needs at least one natural card"
        )
    ranks = {value(c) for c in naturals}
    if len(ranks) != 1:
        shown = " and ".join(value_text(v) for v in sorted(ranks))
        raise IllegalAction(
            "bad_set",
            f"{cards_text(cards)} is not a set: its ranks differ ({shown}). A set is cards "
            f"of one rank; {WILDS}",
        )
    if going_down:
        _wild_limit(cards)
    return ranks.pop()


def run_layout(cards: list[str]) -> tuple[str, int]:
    """(suit, low) for cards listed low to high as a run; raises if they are not one."""
    naturals = [(i, c) for i, c in enumerate(cards) if not is_wild(c)]
    if not naturals:
        raise IllegalAction(
            "too_many_wilds", f"{cards_text(cards)}: a run needs at least one natural card"
        )
    suits = {c[-1] for _, c in naturals}
    if len(suits) != 1:
        shown = " and ".join(SUIT_SYMBOLS[x] for x in sorted(suits))
        raise IllegalAction(
            "run_mixed_suits",
            f"{cards_text(cards)} is not a run: it mixes {shown}. A run is one suit; {WILDS}",
        )
    first_i, first = naturals[0]
    low = value(first) - first_i
    for i, c in naturals:
        if value(c) != low + i:
            raise IllegalAction("bad_run", f"{cards_text(cards)} is not a run: {_run_gap(cards)}")
    if low < LOWEST or low + len(cards) - 1 > HIGHEST:
        raise IllegalAction(
            "bad_run",
            f"{cards_text(cards)} does not fit: a run goes from 3 up to the ace, no further",
        )
    return suits.pop(), low


def _run_gap(cards: list[str]) -> str:
    """Why same-suit cards do not line up as a run, in a player's words."""
    naturals = sorted((value(c), c) for c in cards if not is_wild(c))
    wilds = len(cards) - len(naturals)
    for (a, ca), (b, _) in pairwise(naturals):
        if a == b:
            return f"it holds {card_text(ca)} twice, and a run has one card of each rank"
    missing = naturals[-1][0] - naturals[0][0] + 1 - len(naturals)
    if missing > wilds:
        return (
            f"from {card_text(naturals[0][1])} to {card_text(naturals[-1][1])} it lacks "
            f"{missing} card(s) and has {wilds} wild(s) to stand in for them"
        )
    return "list its cards low to high, each wild where the card it stands for would be"


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
                    "does_not_fit",
                    f"{card_text(c)} does not fit a set of {rank_plural(meld.rank)}: only "
                    f"{rank_plural(meld.rank)} and wilds go there",
                )
        return replace(meld, cards=meld.cards + tuple(cards)), None
    if meld.full:
        raise IllegalAction("run_full", f"the run {run_text(meld)} is full: nothing more fits")
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
    raise IllegalAction("does_not_fit", _misfit(meld, cards, end))


def rank_plural(v: int) -> str:
    return {11: "jacks", 12: "queens", 13: "kings", HIGHEST: "aces"}.get(v, f"{v}s")


def run_text(meld: Meld) -> str:
    """The span a run stands on, e.g. "3♣–8♣" (wilds count where they stand)."""
    return f"{card_text(natural(meld.low, meld.suit))}–{card_text(natural(meld.high, meld.suit))}"


def _end_takes(meld: Meld, end: str) -> str:
    """What one end of a run would take now, in words."""
    if end == HIGH:
        if meld.high >= HIGHEST:
            return "its high end is closed at the ace"
        return f"its high end takes {card_text(natural(meld.high + 1, meld.suit))} or a wild"
    if meld.low <= LOWEST:
        return "its low end is closed at 3"
    return f"its low end takes {card_text(natural(meld.low - 1, meld.suit))} or a wild"


def _misfit(meld: Meld, cards: list[str], end: str | None) -> str:
    """Why `cards` do not go on the run, and what would: so a player sees
    which card each end is waiting for."""
    where = f"the {end} end of" if end is not None else "either end of"
    ends = [end] if end is not None else [LOW, HIGH]
    takes = "; ".join(_end_takes(meld, e) for e in ends)
    several = " (cards go on a run in order, one after another)" if len(cards) > 1 else ""
    return f"{cards_text(cards)} cannot go on {where} the run {run_text(meld)}: {takes}{several}"


def swap(meld: Meld, card: str, to: str) -> tuple[Meld, str]:
    """`meld` with the wild standing for `card` replaced by it and moved to end
    `to`; returns the new meld and the wild's code."""
    if meld.kind != RUN:
        raise IllegalAction("set_wilds_stay", "wilds in a set are never swapped")
    if is_wild(card):
        raise IllegalAction("bad_swap", "swap a wild for a natural card, not for another wild")
    if meld.full:
        raise IllegalAction(
            "run_full", f"the run {run_text(meld)} is full: its wilds have nowhere to move"
        )
    pos = value(card) - meld.low
    if card[-1] != meld.suit or not 0 <= pos < len(meld.cards) or not is_wild(meld.cards[pos]):
        stands = [
            card_text(natural(meld.low + i, meld.suit))
            for i, c in enumerate(meld.cards)
            if is_wild(c)
        ]
        could = f"its wilds stand for {', '.join(stands)}" if stands else "it holds no wild"
        raise IllegalAction(
            "no_wild_there",
            f"no wild in the run {run_text(meld)} stands for {card_text(card)}: {could}",
        )
    if to == HIGH and meld.high >= HIGHEST:
        raise IllegalAction(
            "no_room", f"the run {run_text(meld)} already reaches the ace: move the wild low"
        )
    if to == LOW and meld.low <= LOWEST:
        raise IllegalAction(
            "no_room", f"the run {run_text(meld)} already starts at 3: move the wild high"
        )
    wild = meld.cards[pos]
    cards = list(meld.cards)
    cards[pos] = card
    if to == HIGH:
        return replace(meld, cards=(*cards, wild)), wild
    return replace(meld, cards=(wild, *cards), low=meld.low - 1), wild
