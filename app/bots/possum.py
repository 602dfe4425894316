"""A Possum bot: shed as many cards as possible, and leave a top card that is
hard to answer.

How hard a top value is to answer is estimated once per set of options: the
number of value patterns that are plays against it for a hand holding every
value twice.  High tops (Q, K: many sums but nothing added to them stays a
card) leave the fewest answers; an ace leaves the most (every pair of
neighbours).  The bot draws only when the rules make it (no play exists).
"""

from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache
from typing import Any

from app.games import cards
from app.games.possum.model import PossumOptions
from app.games.possum.patterns import candidates

Action = dict[str, Any]


@lru_cache(maxsize=64)
def answers(top: int, multiply: bool, multi: bool, no_face_cards: bool) -> int:
    """How many value patterns a well-stocked hand could answer `top` with."""
    options = PossumOptions(multiply=multiply, multi=multi)
    highest = 10 if no_face_cards else 13
    stocked = Counter({v: 2 for v in range(1, highest + 1)})
    return len(candidates(stocked, top, options))


class PossumBot:
    def choose(
        self, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
    ) -> Action:
        plays = [a for a in legal if a["type"] == "play"]
        if not plays:
            return legal[0]
        opts = view.get("options", {})
        flags = (
            bool(opts.get("multiply")),
            bool(opts.get("multi")),
            bool(opts.get("no_face_cards")),
        )

        def score(action: Action) -> tuple[int, int]:
            top = cards.rank(action["cards"][-1])
            return (len(action["cards"]), -answers(top, *flags))

        return max(plays, key=score)
