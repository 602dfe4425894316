"""A Possession bot that plays a simple form of the usual tactics: feed nobody, mind steals.

It reads only its view and legal list.  Every candidate property move gets a
value: cards gained for its estate (a steal also counts what the victim
loses), minus a risk charge when the resulting property could still be
extended by a card that might be in someone else's hand, since that is the
card that steals it.  The charge is light in play, heavier in the showdown
(where a steal is often the last word), and zero in open season.  Discards
are chosen to feed nobody: never a card that extends a property, nor one
that builds a run on the pile the next player could finish, and preferably
not one that belongs with the bot's own cards.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from app.games.cards import SUITS, make, rank, suit

Action = dict[str, Any]

RISK_IN_PLAY = 0.3
RISK_IN_SHOWDOWN = 0.6
#: a steal also takes the cards away from their owner
DENIAL = 0.5


class Table:
    """What the bot knows, worked out once per decision."""

    def __init__(self, view: dict[str, Any], seat: int) -> None:
        self.seat = seat
        self.hand: list[str] = list(view["hand"])
        self.held = Counter(self.hand)
        self.props: dict[str, dict[str, Any]] = {p["id"]: p for p in view["properties"]}
        self.pile: list[str] = list(view["pile"])
        self.decks: int = view["decks"]
        self.set_limit: int = view["set_limit"]
        self.distinct = self.decks == 1 or bool(view["options"]["distinct_suit_sets"])
        self.showdown = view["phase"] == "showdown"
        rivals = [s for s in range(view["seats"]) if s != seat and s not in view["folded"]]
        self.weight = 0.0 if not rivals else RISK_IN_SHOWDOWN if self.showdown else RISK_IN_PLAY
        self.known: Counter[str] = Counter(self.hand)
        for p in view["properties"]:
            self.known.update(p["cards"])
        if self.showdown:
            # Nothing is drawn in the showdown: cards seen on the pile stay there.
            self.known.update(self.pile)

    # -- facts about cards ---------------------------------------------------------

    def may_be_out(self, card: str, extra: Counter[str] | None = None) -> bool:
        """Could another player hold (or still draw) this card?"""
        seen = self.known[card] + (extra[card] if extra else 0)
        return self.decks - seen > 0

    def extenders(self, kind: str, cards: list[str]) -> list[str]:
        """Every card that could extend a property of this shape."""
        if kind == "set":
            if len(cards) >= self.set_limit:
                return []
            r = rank(cards[0])
            have = {suit(c) for c in cards}
            return [make(r, s) for s in SUITS if not (self.distinct and s in have)]
        s = suit(cards[0])
        lo, hi = min(rank(c) for c in cards), max(rank(c) for c in cards)
        return [make(r, s) for r in (lo - 1, hi + 1) if 1 <= r <= 13]

    def exposed(self, kind: str, cards: list[str], extra: Counter[str] | None = None) -> bool:
        return any(self.may_be_out(c, extra) for c in self.extenders(kind, cards))

    def fits(self, card: str, prop: dict[str, Any]) -> bool:
        return card in self.extenders(prop["kind"], prop["cards"]) and (
            prop["kind"] == "run" or not self.distinct or card not in prop["cards"]
        )

    # -- valuing moves ----------------------------------------------------------------

    def move_value(self, action: Action) -> float:
        if action["type"] == "meld":
            k = action.get("from_pile", 0)
            from_pile = self.pile[len(self.pile) - k :] if k else []
            cards = [*from_pile, *action["cards"]]
            kind = "set" if len({rank(c) for c in cards}) == 1 else "run"
            risky = self.exposed(kind, cards, Counter(from_pile))
            return len(cards) - self.weight * len(cards) * risky
        prop = self.props[action["property"]]
        before = list(prop["cards"])
        after = before + list(action["cards"])
        risk_after = self.weight * len(after) * self.exposed(prop["kind"], after)
        if prop["owner"] == self.seat:
            risk_before = self.weight * len(before) * self.exposed(prop["kind"], before)
            return len(action["cards"]) - (risk_after - risk_before)
        return len(after) + DENIAL * len(before) - risk_after

    def useful_top(self) -> bool:
        """Would the pile's top card let the bot add to or steal a property?"""
        if not self.pile:
            return False
        top = self.pile[-1]
        for prop in self.props.values():
            if self.fits(top, prop):
                return True
            if prop["kind"] == "run" and suit(top) == suit(prop["cards"][0]):
                # A chain of hand cards from the property's end out to the top card.
                ranks = [rank(c) for c in prop["cards"]]
                have = {rank(c) for c in self.hand if suit(c) == suit(top)} | {rank(top)}
                for start, step in ((min(ranks) - 1, -1), (max(ranks) + 1, 1)):
                    r = start
                    while r in have:
                        if r == rank(top):
                            return True
                        r += step
        return False

    # -- discards ----------------------------------------------------------------------

    def discard_cost(self, card: str) -> float:
        cost = 0.0
        for prop in self.props.values():
            if self.fits(card, prop):
                # Whoever picks it up adds to or steals this property.
                cost += 10 + len(prop["cards"])
        cost += self.pile_threat(card)
        cost += self.keep_value(card)
        return cost

    def pile_threat(self, card: str) -> float:
        """How much a discard helps the next player make a property from the pile:
        a charge when one more card, possibly in another hand, would finish one."""
        below = list(reversed(self.pile))
        same_rank = [card]
        for c in below:
            if rank(c) != rank(card):
                break
            same_rank.append(c)
        same_suit = [card]
        for c in below:
            if suit(c) != suit(card) or rank(c) in {rank(x) for x in same_suit}:
                break
            same_suit.append(c)
        threat = 0.0
        if len(same_rank) >= 2:
            have = {suit(c) for c in same_rank}
            need = [make(rank(card), s) for s in SUITS if not (self.distinct and s in have)]
            if any(self.may_be_out(c) for c in need):
                threat = max(threat, 3.0 + len(same_rank))
        if len(same_suit) >= 2:
            ranks = sorted(rank(c) for c in same_suit)
            gaps = [r for r in range(ranks[0], ranks[-1] + 1) if r not in ranks]
            s = suit(card)
            if not gaps:
                need = [make(r, s) for r in (ranks[0] - 1, ranks[-1] + 1) if 1 <= r <= 13]
            elif len(gaps) == 1:
                need = [make(gaps[0], s)]
            else:
                need = []
            if any(self.may_be_out(c) for c in need):
                threat = max(threat, 3.0 + len(same_suit))
        return threat

    def keep_value(self, card: str) -> float:
        """How much the card belongs with the bot's own cards."""
        rest = list(self.hand)
        rest.remove(card)
        value = 0.0
        for other in rest:
            if rank(other) == rank(card):
                value += 1.5
            elif suit(other) == suit(card) and abs(rank(other) - rank(card)) <= 2:
                value += 1.0
        return value


class PossessionBot:
    def choose(
        self, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
    ) -> Action:
        if len(legal) == 1:
            return legal[0]
        table = Table(view, seat)
        by_type: dict[str, list[Action]] = {}
        for action in legal:
            by_type.setdefault(action["type"], []).append(action)
        if "draw" in by_type:
            pile = {"type": "draw", "source": "pile"}
            if pile in legal and table.useful_top():
                return pile
            return {"type": "draw", "source": "stock"}

        moves = by_type.get("meld", []) + by_type.get("extend", [])
        best: Action | None = None
        best_value = float("-inf")
        for action in moves:
            value = table.move_value(action) + rng.random() * 1e-3
            if value > best_value:
                best, best_value = action, value
        discards = by_type.get("discard", [])
        cheapest: Action | None = None
        cheapest_cost = float("inf")
        for action in discards:
            cost = table.discard_cost(action["card"]) + rng.random() * 1e-3
            if cost < cheapest_cost:
                cheapest, cheapest_cost = action, cost

        if best is not None and (best_value > 0 or (discards and best_value > -cheapest_cost)):
            return best
        if "keep" in by_type:
            return by_type["keep"][0]
        if "fold" in by_type:
            return by_type["fold"][0]
        if cheapest is not None:
            return cheapest
        return rng.choice(legal)
