"""How much a Possum seat's choices can win: the heuristic against an oracle.

Possum's heuristic wins about 30% of 4-seat games against three random
players (fair 25%; issue 29 asked for 45%).  This bench measures how much
room its choices leave: the same deals (every seat rotation) are played by

- `heuristic`: app/bots/possum.py, from the seat's view;
- `oracle-top`: the same seat allowed to look at every other hand when it
  picks its play: it leaves the top card that the most seats after it, in
  turn, cannot answer from what they hold (then the heuristic's order).

Each is one seat against three random players; the figure is the win share
and the paired difference (oracle less heuristic) with a 95% interval over
deals.  If even a seat that sees every hand gains only a few points, no
choice made from the view can reach 45%: a seat chooses among plays on only a
few turns a game (more than half its turns offer one play or none, and a
draw is never a choice).

Usage:
  nice -n 10 .venv/bin/python bench/possum_ceiling.py --deals 1000
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots.base import Action, RandomBot
from app.bots.possum import PossumBot, answers
from app.games import cards
from app.games.possum import POSSUM
from app.games.possum.model import PossumState
from app.games.possum.patterns import can_play
from app.games.possum.plays import value_counts

Policy = Callable[[PossumState, dict[str, Any], list[Action], int, random.Random], Action]
SEATS = 4
_HEURISTIC = PossumBot()
_RANDOM = RandomBot()


def heuristic(
    state: PossumState, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
) -> Action:
    return _HEURISTIC.choose(view, legal, seat, rng)


def oracle_top(
    state: PossumState, view: dict[str, Any], legal: list[Action], seat: int, rng: random.Random
) -> Action:
    """Reads every hand (which no bot may): the play whose top the most seats
    after this one, in turn, cannot answer; then the heuristic's order."""
    plays = [a for a in legal if a["type"] == "play"]
    if not plays:
        return legal[0]
    n = len(state.hands)

    def stuck(top: int) -> int:
        k = 0
        for step in range(1, n):
            if can_play(value_counts(state.hands[(seat + step) % n]), top, state.options):
                break
            k += 1
        return k

    def key(action: Action) -> tuple[int, int, int]:
        top = cards.rank(action["cards"][-1])
        return (stuck(top), len(action["cards"]), -answers(top, False, False, False))

    return max(plays, key=key)


POLICIES: dict[str, Policy] = {"heuristic": heuristic, "oracle-top": oracle_top}


def deal_share(name: str, seed: int) -> float:
    """The policy's win share over every rotation of one deal."""
    policy = POLICIES[name]
    won = 0.0
    for me in range(SEATS):
        state = POSSUM.new_game(SEATS, {}, seed)
        rngs = [random.Random(f"{seed}:{me}:{s}") for s in range(SEATS)]
        while POSSUM.result(state) is None:
            seat = state.turn
            assert seat is not None
            legal = POSSUM.legal_actions(state, seat)
            view = POSSUM.view(state, seat)
            if seat == me:
                action = policy(state, view, legal, seat, rngs[seat])
            else:
                action = _RANDOM.choose(view, legal, seat, rngs[seat])
            state, _ = POSSUM.apply(state, seat, action)
        result = POSSUM.result(state)
        assert result is not None
        first = result["places"][0]
        won += 1.0 / len(first) if me in first else 0.0
    return won / SEATS


def ci(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--deals", type=int, default=500)
    p.add_argument("--first-seed", type=int, default=1000)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.deals)
    shares: dict[str, list[float]] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for name in POLICIES:
            shares[name] = list(pool.map(deal_share, [name] * len(seeds), seeds, chunksize=20))
    for name, values in shares.items():
        m, h = ci(values)
        share = f"{100 * m:5.1f}% ± {100 * h:4.1f}"
        print(f"{name:10s} win {share} v three random ({len(seeds)} deals)")
    diffs = [a - b for a, b in zip(shares["oracle-top"], shares["heuristic"], strict=True)]
    m, h = ci(diffs)
    print(f"oracle-top less heuristic: {100 * m:+.1f} ± {100 * h:.1f} points")


if __name__ == "__main__":
    main()
