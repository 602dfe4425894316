"""How fast the rules engines play: complete random games per second.

Each game is played through the engine contract alone (to_act, legal_actions,
apply; a timeout from seat None when the game waits on a room timer), by a
random policy that prefers progress (laying melds, playing cards) so that games
end the way real ones do instead of drifting.  Prints one line per game and
seat count.  Usage: .venv/bin/python bench/engines.py [seconds-per-row]
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.games import GAMES
from app.games.base import Game

PROGRESS = {"go_down", "play_on", "meld", "extend", "play", "swap_wild"}
CONFIGS: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "posso": [(2, {}), (3, {}), (4, {}), (7, {}), (10, {})],
    "bigtwo": [(4, {})],
    "possum": [(2, {}), (4, {}), (6, {}), (4, {"multiply": True, "multi": True})],
    "possession": [(2, {}), (3, {}), (4, {})],
}


def play(game: Game[Any], seats: int, options: dict[str, Any], seed: int) -> int:
    rng = random.Random(seed)
    state = game.new_game(seats, options, seed)
    actions = 0
    while game.result(state) is None:
        acting = sorted(game.to_act(state))
        if not acting:
            state, _ = game.apply(state, None, {"type": "timeout"})
        else:
            seat = rng.choice(acting)
            legal = game.legal_actions(state, seat)
            good = [a for a in legal if a["type"] in PROGRESS]
            pick = good if good and rng.random() < 0.9 else legal
            state, _ = game.apply(state, seat, rng.choice(pick))
        actions += 1
    return actions


def bench_go_down_finder(seconds: float) -> None:
    try:
        from app.games.posso.finder import find_go_down
    except ImportError:
        return
    from app.games import cards

    rng = random.Random(1)
    deck = cards.build_deck(2, jokers_per_deck=2)
    for hand_no in (1, 5, 6, 9, 10):
        size = 6 + hand_no + 1
        n, found, t0 = 0, 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            hand = rng.sample(deck, size)
            found += find_go_down(hand, hand_no) is not None
            n += 1
        dt = time.perf_counter() - t0
        print(
            f"posso go-down finder  hand {hand_no:2d} ({size} cards): "
            f"{n / dt:9.0f} hands/s, {1e6 * dt / n:8.1f} us/hand, found in {100 * found / n:.0f}%"
        )


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    for name, configs in CONFIGS.items():
        game = GAMES.get(name)
        if game is None:
            print(f"{name}: not registered")
            continue
        for seats, options in configs:
            games = actions = 0
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                actions += play(game, seats, options, seed=games)
                games += 1
            dt = time.perf_counter() - t0
            print(
                f"{name:10s} {seats:2d} seats {options!s:36s} "
                f"{games / dt * 60:10.0f} games/min {actions / dt:10.0f} actions/s "
                f"({actions / games:.0f} actions/game)"
            )
    bench_go_down_finder(seconds)


if __name__ == "__main__":
    main()
