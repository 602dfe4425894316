"""What a long Posso hand ten costs: moves and minutes, with normal bots in
every seat, by seat count and by the `reshuffles` rule (how often the stack
may be rebuilt from the pile before the hand ends with nobody out).

Each game starts at hand ten (`start_hand`), is played through the engine
contract by the normal bot (a timeout from seat None when the hand waits on a
room timer: a Posso window nobody answers). Minutes are the moves at a
person's pace, taken here as the default bot thinking time (0.8 s a move) plus
the default Posso window (8 s) after each discard that nobody answers at
once (a table that waits out every window), or with every window closed at
once (everyone's quiet switches on, or quick answers). Prints one line per
setting: the median and longest hand in moves, its windows, and its minutes.
Usage: .venv/bin/python bench/hand_ten.py [games-per-row]
"""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import bot_for
from app.games import GAMES

MOVE_S = 0.8
WINDOW_S = 8.0


def hand_ten(seats: int, reshuffles: int | None, seed: int) -> tuple[int, int]:
    """Moves and Posso windows in one hand ten."""
    game = GAMES["posso"]
    bot = bot_for("posso")
    rng = random.Random(seed)
    opts: dict[str, Any] = {"start_hand": 10, "cutting": "off", "reshuffles": reshuffles}
    state = game.new_game(seats, opts, seed)
    moves = windows = 0
    while game.result(state) is None:
        acting = sorted(game.to_act(state))
        if not acting:
            state, _ = game.apply(state, None, {"type": "timeout"})
            continue
        seat = acting[0]
        if state.phase == "posso_window":
            windows += 1
            state, _ = game.apply(state, None, {"type": "timeout"})
            continue
        view = game.view(state, seat)
        action = bot.choose(view, game.legal_actions(state, seat), seat, rng)
        state, _ = game.apply(state, seat, action)
        moves += 1
    return moves, windows


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    print("seats reshuffles  moves(median/longest)  windows  min-waiting  min-quick")
    for seats in (2, 4):
        for reshuffles in (3, 1, 0):
            runs = [hand_ten(seats, reshuffles, seed) for seed in range(n)]
            moves = statistics.median(m for m, _ in runs)
            windows = statistics.median(w for _, w in runs)
            longest = max(m for m, _ in runs)
            # every window waited out, or every window closed at once (quiet
            # switches on for everyone, or quick answers)
            waiting = (moves * MOVE_S + windows * WINDOW_S) / 60
            quick = moves * MOVE_S / 60
            print(
                f"{seats:5} {reshuffles!s:10} {moves:10.0f}/{longest:<10} {windows:8.0f}"
                f" {waiting:12.1f} {quick:10.1f}"
            )


if __name__ == "__main__":
    main()
