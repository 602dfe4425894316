"""A Posso bot that plays like a sensible beginner, from its view alone.

Before going down it keeps what builds towards the hand's requirement (cards
sharing a rank when sets are wanted, near neighbours in a suit when runs are),
draws or begs ("Posso?") only cards that help, and throws away the loneliest,
most expensive card.  Once down it lays everything it can and discards its
costliest card.  It never cheats: it sees exactly what its seat sees.
"""

from __future__ import annotations

import random
from typing import Any

Action = dict[str, Any]

RANK_VALUE = {"A": 14, "J": 11, "Q": 12, "K": 13}


def is_wild(card: str) -> bool:
    return card == "JK" or card[:-1] == "2"


def value(card: str) -> int:
    rank = card[:-1]
    return RANK_VALUE.get(rank) or int(rank)


def points(card: str) -> int:
    if card == "JK":
        return 0
    v = card[:-1]
    if v == "2":
        return 20
    if v == "A":
        return 15
    return 10 if value(card) >= 8 else 5


def keep_score(card: str, hand: list[str], requirement: dict[str, Any]) -> float:
    """How much `card` helps towards going down (higher: keep it)."""
    if is_wild(card):
        return 100.0
    kinds = {m["kind"] for m in requirement["melds"]}
    others = list(hand)
    if card in others:
        others.remove(card)
    naturals = [c for c in others if not is_wild(c)]
    score = 0.0
    if "set" in kinds:
        score += 10 * sum(1 for c in naturals if value(c) == value(card))
    if "run" in kinds:
        suit, v = card[-1], value(card)
        near = {value(c) for c in naturals if c[-1] == suit and 0 < abs(value(c) - v) <= 2}
        score += 6 * len(near)
        if requirement["all_cards"]:
            score += sum(1 for c in naturals if c[-1] == suit)  # stick to strong suits
    return score - points(card) / 100


def useful(card: str | None, hand: list[str], requirement: dict[str, Any]) -> bool:
    """Would taking `card` help go down?"""
    if card is None:
        return False
    if is_wild(card):
        return True
    return keep_score(card, [*hand, card], requirement) >= 10


def fits_table(card: str | None, melds: list[dict[str, Any]]) -> bool:
    """Could `card` be played on a meld already on the table?"""
    if card is None:
        return False
    for m in melds:
        if m["kind"] == "set":
            if is_wild(card) or m["rank"] == card[:-1]:
                return True
        elif not m["full"] and (is_wild(card) or card[-1] == m["suit"]):
            low, high = value(m["low"] + "S"), value(m["high"] + "S")
            if is_wild(card) or value(card) in (low - 1, high + 1):
                return True
    return False


#: how often a bot draws from the stack although the discard would help it.
#: Bots that always take a useful discard can pass the same few cards round the
#: table for ever - each takes what the last one threw, throws what the next
#: one wants - and the stack, whose running out ends a hand nobody can win,
#: never shrinks (one game in three hundred, by bench of bot-only games).
BLIND_DRAW = 0.1


class PossoBot:
    def choose(
        self, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
    ) -> Action:
        kinds = {a["type"] for a in legal}
        hand: list[str] = view.get("hand") or []
        req = view["requirement"]
        down = bool(view["down"][seat])
        top = view.get("pile_top")
        if "cut" in kinds:
            return self._cut(view, legal, rng)
        if "call_posso" in kinds:
            big = len(hand) >= req["deal"] + 4
            want = not down and not big and useful(top, hand, req)
            return _first(legal, "call_posso" if want else "pass_posso")
        if "answer_posso" in kinds:
            keep = useful(top, hand, req) or (down and fits_table(top, view["melds"]))
            return next(a for a in legal if a["allow"] is not keep)
        if "draw" in kinds:
            take_pile = useful(top, hand, req) if not down else fits_table(top, view["melds"])
            if take_pile and rng.random() < BLIND_DRAW:
                take_pile = False
            source = "pile" if take_pile else "stack"
            return next((a for a in legal if a["source"] == source), legal[0])
        for kind in ("go_down", "swap_wild"):
            if kind in kinds:
                return _first(legal, kind)
        plays = [a for a in legal if a["type"] == "play_on"]
        if plays:
            naturals = [a for a in plays if not is_wild(a["cards"][0])]
            return (naturals or plays)[0]
        discards = [a for a in legal if a["type"] == "discard"]
        if down:
            return max(discards, key=lambda a: (not is_wild(a["card"]), points(a["card"])))
        return min(discards, key=lambda a: keep_score(a["card"], hand, req))

    @staticmethod
    def _cut(view: dict[str, Any], legal: list[Action], rng: random.Random) -> Action:
        cut = view.get("cut") or {}
        deck, target = cut.get("deck"), cut.get("target")
        if not deck or target is None:
            return legal[0]
        if rng.random() < 0.5:  # a human's hand is not that steady
            return rng.choice(legal)
        aim = (target + 0.5) / deck
        return min(legal, key=lambda a: abs(a["at"] - aim))


def _first(legal: list[Action], kind: str) -> Action:
    return next(a for a in legal if a["type"] == kind)
