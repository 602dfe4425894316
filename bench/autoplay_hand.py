"""What "play my turns this hand" saves on a long Posso hand: a real room
(app/rooms/room.py, storage in memory) with one person and normal bots in
the other seats, the room's default settings (bot thinking time 0.8 s, Posso
window 8 s); the person hands their turns to the bot (`autoplay`) as each
hand begins, so nobody left plays their own turns and every move goes at the
fastest bot delay (FASTEST_BOT_DELAY).  Seeded: the same seeds deal the
same games.

For each seat count it prints the hand-ten-only game (`start_hand` 10) and,
with `--whole`, the whole game of ten hands: moves (the game's log), the
minutes those moves take at the default delay (0.8 s a move: a bot-only
table's pace, each Posso window answered by the bots in turn), and the
seconds the room took here on autoplay at the fastest delay (this machine,
one process; the room's own work per move: engine, bots, log, one socket's
frames).
Usage: .venv/bin/python bench/autoplay_hand.py [games-per-row] [--whole]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.games import GAMES
from app.rooms.connection import Connection
from app.rooms.room import Room
from app.rooms.settings import RoomSettings
from app.store.records import MemoryRecords

MOVE_S = RoomSettings().bot_delay  # the default bot thinking time


async def _sink(text: str) -> None:
    """The person's socket: frames are made and sent, and read by nobody."""


async def _closed(code: int, reason: str) -> None:
    """Nothing to close."""


async def one_game(seats: int, seed: int, start_hand: int) -> tuple[int, float]:
    """Moves and wall seconds of one seeded game on autoplay."""
    game = GAMES["posso"]
    options = game.parse_options({"start_hand": start_hand}).model_dump(mode="json")
    room = Room.new(
        f"BENCH{seed:02d}", game, options, RoomSettings(), GAMES, MemoryRecords(),
        seeds=lambda: seed,
    )  # fmt: skip
    ann, _ = await room.join("Ann")
    conn = Connection(_sink, _closed)
    conn.player_id = ann.player_id
    await room.connect(conn)
    ids = iter(range(1, 10**9))
    for _ in range(seats - 1):
        await room.handle(conn, next(ids), "cmd", {"type": "add_bot"})
    started = time.perf_counter()
    await room.handle(conn, next(ids), "cmd", {"type": "start"})
    while room.status == "playing":
        if 0 not in room.table.autoplay:  # a new hand: Ann taps again
            await room.handle(conn, next(ids), "cmd", {"type": "autoplay", "on": True})
        await asyncio.sleep(0.001)
    took = time.perf_counter() - started
    moves = room.seq
    await room.shutdown()
    return moves, took


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 5
    starts = [10, 1] if "--whole" in sys.argv else [10]
    print("seats hands     moves(median/longest)  min-at-0.8s  s-on-autoplay(median/longest)")
    for start in starts:
        for seats in (2, 4):
            runs: list[tuple[int, float]] = [
                asyncio.run(one_game(seats, seed, start)) for seed in range(n)
            ]
            moves = statistics.median(m for m, _ in runs)
            secs = [s for _, s in runs]
            what = "ten" if start == 10 else "1-10"
            print(
                f"{seats:5} {what:5} {moves:10.0f}/{max(m for m, _ in runs):<10}"
                f" {moves * MOVE_S / 60:12.1f} {statistics.median(secs):14.1f}/{max(secs):.1f}"
            )


if __name__ == "__main__":
    main()
