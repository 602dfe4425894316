"""Planted bugs the simulator's checks exist to catch (mutation testing of the
checks themselves).

Each `Mutant` is one small edit of the server's code: a piece of text in a
file of app/ and what it becomes.  `make test-slow` (tests/sim/test_mutants.py)
copies app/ to a scratch directory, applies one edit there - never to the
working tree - and runs the simulator over seeds 0, 1, 2, ... in a process
whose `app` is that copy, stopping at the first failure; the bug is caught if
a check fails within `SEEDS` seeds.  An edit whose text is no longer in the
file fails at once, so a refactor of app/ cannot quietly turn a mutant into
the unchanged code.

`python -m tests.sim.mutants` runs them all and prints the score;
`python -m tests.sim.mutants NAME` one; `--list` names them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: seeds within which each planted bug must be caught
SEEDS = 300
#: CPU seconds a seed may take under a mutant: the simulator's own limit
#: (tests/sim/run.py WALL_LIMIT).  A seed stopped there is not a catch: at 30,
#: seed 21 (which needs more, unchanged) "caught" three bugs that no check saw
WALL = 180


@dataclass(frozen=True)
class Mutant:
    name: str
    #: the check meant to catch it (another catching it counts too)
    check: str
    #: what goes wrong, as a person would notice
    bug: str
    path: str
    old: str
    new: str
    #: further edits of the same bug: (path, old, new)
    more: tuple[tuple[str, str, str], ...] = ()


MUTANTS: list[Mutant] = [
    # ---- who moved and when (issue 35, "Why")
    Mutant(
        "bot_plays_for_connected",
        "origin",
        "a bot plays a connected person's turn",
        "app/rooms/bot_driver.py",
        "return p is None or p.is_bot or self.table.stand_in(seat)",
        "return p is None or p.is_bot or self.table.stand_in(seat)"
        " or self.members.connected(p.player_id)",
    ),
    Mutant(
        "bot_ignores_delay",
        "origin",
        "a bot ignores the room's bot delay",
        "app/rooms/waits.py",
        "delay = self.bots.pace(self.room.settings.bot_delay)\n",
        "delay = 0.0\n",
    ),
    Mutant(
        "autoplay_outlives_hand",
        "origin",
        '"play my turns this hand" goes on after the hand ends: a bot plays the next '
        "hand for a person who is here",
        "app/rooms/bot_driver.py",
        'ev.get("type") == "hand_ended" and ev.get("to") is None for ev in events',
        'ev.get("type") == "never" and ev.get("to") is None for ev in events',
    ),
    Mutant(
        "autoplay_rushes_people",
        "origin",
        "bots move at the fastest delay while a person still plays their own turns",
        "app/rooms/bot_driver.py",
        "if self.asked() and all(self.bot_drives(s) for s in range(len(table.game_seats))):",
        "if self.asked():",
    ),
    Mutant(
        "removed_still_play",
        "origin",
        "people who left or were removed still play their seat from their open sockets",
        "app/rooms/places.py",
        "self.delivery.close_person(person.player_id, code, reason)",
        "pass",
    ),
    Mutant(
        "turn_timer_ten_times",
        "deadlines",
        "a turn timer ten times too long",
        "app/rooms/waits.py",
        "max(since, self.room.settings_at) + limit,",
        "max(since, self.room.settings_at) + 10 * limit,",
    ),
    Mutant(
        "auto_bot_never",
        "deadlines",
        "auto_bot never takes over an away seat",
        "app/rooms/presence.py",
        "if table.playing and self.settings.auto_bot:",
        "if table.playing and self.settings.auto_bot and not table.playing:",
    ),
    # ---- what was promised
    Mutant(
        "unstored_change_acknowledged",
        "promises",
        "a leave, kick or setting storage refused is acknowledged all the same, "
        "and a crash loses it",
        "app/rooms/room.py",
        "if not self.stored and changed:",
        "if not self.stored and changed and not people:",
    ),
    Mutant(
        "leave_never_written",
        "promises",
        "a leave that is never written",
        "app/rooms/places.py",
        "            await self.room.close()\n            return\n        await self.room.save()\n",
        "            await self.room.close()\n            return\n"
        "        self._saved = self.members.snapshot()\n",  # it believes it saved
    ),
    Mutant(
        "failed_move_acknowledged",
        "nothing lost",
        "a move whose write failed is played and acknowledged all the same",
        "app/rooms/table.py",
        "            if not await self._landed(seat, action, state, events):",
        "            if not await self._landed(seat, action, state, events) and False:",
    ),
    # ---- where cards go
    Mutant(
        "resume_sends_all_seats",
        "hidden cards",
        "a resume sends every seat's private events",
        "app/rooms/story.py",
        "if to is None or to == seat]",
        "if to is None or to == seat or True]",
    ),
    Mutant(
        "story_pages_for_seat_0",
        "hidden cards",
        "an older page of the log (the story command) holds seat 0's private events",
        "app/rooms/delivery.py",
        "self.history, self.table.game_seat.get(conn.player_id), since=0, before=before",
        "self.history, 0, since=0, before=before",
    ),
    Mutant(
        "change_sends_all_seats",
        "hidden cards",
        "a change sends every seat's private events to everyone",
        "app/rooms/delivery.py",
        "else [frame for to, frame in frames if to is None or to == seat]",
        "else [frame for to, frame in frames]",
    ),
    # ---- busy work
    Mutant(
        "save_retry_50ms",
        "no busy work",
        "a save retried every 50 ms while storage is away",
        "app/rooms/saving.py",
        "delay = self._save_retry.next(self._jitter)",
        "delay = 0.05 + 0 * self._save_retry.next(self._jitter)",
    ),
    Mutant(
        "rearm_at_same_instant",
        "no busy work",
        "a save retried at the instant it failed, with no floor on re-arming a wait at "
        "the moment it fired: virtual time stops while storage is away",
        "app/rooms/timers.py",
        "deadline = max(deadline, self.clock() + REARM_FLOOR)",
        "deadline = max(deadline, self.clock())",
        more=(
            (
                "app/rooms/saving.py",
                '"save", "save", self.clock() + delay,',
                '"save", "save", self.clock() + 0 * delay,',
            ),
        ),
    ),
    Mutant(
        "timeout_retried_at_once",
        "no busy work",
        "a refused timeout is tried again at once, for as long as storage is away",
        "app/rooms/waits.py",
        '"game", t.kind, self.clock() + delay, self._on_game_timer',
        '"game", t.kind, self.clock() + 0.01 * delay, self._on_game_timer',
    ),
    # ---- memory
    Mutant(
        "seat_order_kept",
        "bounded memory",
        "the seat order of people who left is never pruned",
        "app/rooms/membership.py",
        "            self.seated_at.pop(p.player_id, None)\n",
        "            pass\n",
    ),
    Mutant(
        "posso_switches_kept",
        "bounded memory",
        "the Posso switches of people who left are never pruned",
        "app/rooms/places.py",
        "        self.quiet.forget(person.player_id)\n",
        "",
    ),
    Mutant(
        "chat_allowance_kept",
        "bounded memory",
        "the chat allowance of people who left is never pruned",
        "app/rooms/membership.py",
        "        self.chatter.pop(pid, None)\n",
        "",
    ),
    # ---- one per remaining check
    Mutant(
        "no_bot_wait",
        "never stuck",
        "a seat a bot drives gets no wait to play it",
        "app/rooms/waits.py",
        "if timers.get(slot) is None and self.bots.bot_drives(seat):",
        "if timers.get(slot) is None and self.bots.bot_drives(seat) and seat < 0:",
    ),
    Mutant(
        "dead_token_works",
        "people",
        "a leaver's token keeps working",
        "app/rooms/membership.py",
        '        self.by_token.pop(p.token_hash, None)\n        p.token_hash = ""',
        "        pass",
    ),
]


def apply(mutant: Mutant, scratch: Path) -> None:
    """app/ copied to `scratch` with `mutant` applied there, and tests/ beside it."""
    shutil.copytree(ROOT / "app", scratch / "app", ignore=shutil.ignore_patterns("__pycache__"))
    (scratch / "tests").symlink_to(ROOT / "tests")
    for path, old, new in ((mutant.path, mutant.old, mutant.new), *mutant.more):
        target = scratch / path
        text = target.read_text()
        if text.count(old) != 1:
            raise ValueError(f"mutant {mutant.name}: its text is not once in {path}")
        target.write_text(text.replace(old, new))


def run(mutant: Mutant, seeds: int = SEEDS) -> tuple[bool, str]:
    """Whether the simulator catches `mutant` within `seeds` seeds, and what it said."""
    with tempfile.TemporaryDirectory(prefix="sim-mutant-") as tmp:
        scratch = Path(tmp)
        apply(mutant, scratch)
        env = {
            **os.environ,
            "PYTHONPATH": str(scratch),
            "PYTHONDONTWRITEBYTECODE": "1",
            "SIM_WALL": str(WALL),
            "SIM_STORE": "memory",
        }
        args = [sys.executable, "-m", "tests.sim.run", "--seeds", str(seeds), "--first-failure"]
        done = subprocess.run(
            [*args, "--expect-app", str(scratch / "app")],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    out = done.stdout.strip().splitlines()
    if done.returncode == 2:
        raise RuntimeError(f"mutant {mutant.name} did not run: {done.stdout[-2000:]}{done.stderr}")
    said = out[0] if out else done.stderr[-500:]
    # caught: a seed failed a check (anything else - the run itself broken, or a
    # seed out of CPU time, which says nothing of what went wrong - is not a catch)
    out_of_time = said.startswith("seed ") and ": WallLimit(" in said
    caught = done.returncode == 1 and said.startswith("seed ") and not out_of_time
    if done.returncode == 1 and not caught and not out_of_time:
        raise RuntimeError(f"mutant {mutant.name}: the simulator itself failed: {said}")
    return caught, said


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:26} [{m.check}] {m.bug}")
        return 0
    chosen = [m for m in MUTANTS if not args.names or m.name in args.names]
    t0 = time.monotonic()
    caught = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = {pool.submit(run, m, args.seeds): m for m in chosen}
        for done in as_completed(runs):
            m, (found, said) = runs[done], done.result()
            caught += found
            took = time.monotonic() - t0
            verdict = "caught" if found else "MISSED"
            print(f"{verdict:6} {m.name:26} {took:4.0f} s  {said}", flush=True)
    took = time.monotonic() - t0
    print(f"{caught}/{len(chosen)} planted bugs caught within {args.seeds} seeds, {took:.0f} s")
    return 0 if caught == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
