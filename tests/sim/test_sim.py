"""The room simulator over many seeds (tests/sim/world.py; docs/architecture.md,
"The simulator").  `make test` runs the first `SIM_SEEDS` (75) seeds, `make
test-slow` a fixed 2,000 more, and `make sim SEEDS=n` any number; a failure
names its seed, and `SIM_SEED=<n> make sim` replays it with its whole trace."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from tests.db.backends import fresh_pg_database
from tests.sim.mutants import MUTANTS
from tests.sim.run import run_seed
from tests.sim.world import Sim

QUICK = int(os.environ.get("SIM_SEEDS", "75"))
BLOCK = 25

#: seeds that found a bug, kept so it stays found (a seed names a run of the
#: simulator of its day: the later kinds of step changed what some replay;
#: tests/rooms holds each fix's own test too)
REGRESSIONS = {
    3: "a join acknowledged while storage refused the save was lost in a crash",
    14: "a kick acknowledged while storage was away was lost in a crash: saves now retry",
    15: "a leave acknowledged while storage refused the save came back after a crash",
    34: "a host role handed to someone away was never passed on: no presence wait was set",
    217: "a tab opened late in a long game was sent more history than a socket may queue: dropped",
    64: "a leave acknowledged while storage was away was lost in a crash",
    80: "a new game's presence wait was taken for the last game's, already fired",
    82: "a join while storage was away raised instead of answering storage_error",
    379: "a leave stored only after a crash that came first: allowed only with a save pending",
    1186: "a save whose answer was lost, then a join undone by a leave: the leave was not written",
    12302: "a setting storage refused was set again and acknowledged while its save was "
    "still pending (nothing changed in the room): a crash lost it",
    4738: "a 10-seat Posso table on autoplay at the fastest pace: each window woke 9 bots in "
    "no time, past a bound of 3 firings a move (the simulator's bound, now one per other seat)",
    1685: "the last game's older log page, after the host chose another game, was judged as "
    "the new game's (the simulator's own mistake: its cards seemed hidden)",
    100274: "two 5H in one Posso set (several decks): the leak check counted the shown one once",
    100684: "a bot thought about the game before a move settled after an outage, and was refused",
    103: "a join acknowledged while storage refused the save was lost in a crash",
    103786: "a room closed by its last leaver while storage was away was let go unstored",
    104075: "a save in flight at a crash was not seen as pending by the crash check",
    104673: "a closed room let go before its close was stored came back open on the next join",
    201258: "a rebuild whose finished games could not be read kept a stale tally and added to it",
}


BLOCKS = range((QUICK + BLOCK - 1) // BLOCK)
#: what the quick seeds reached, per block (`test_every_command_and_state_is_reached`)
REACHED: dict[int, Counter[str]] = {}

#: what the quick seeds must reach between them: every room command done
#: (and refused), links used, every kind of cause moving, every wait firing,
#: the room states and storage faults the checks are about
MUST_REACH = [
    *(
        f"cmd:{c}:ok"
        for c in [
            "sit",
            "start",
            "rematch",
            "add_bot",
            "remove_bot",
            "kick",
            "leave",
            "chat",
            "set_game",
            "set_settings",
            "make_host",
            "hand_to_bot",
            "seat_link",
            "move_link",
            "resync",
            "posso_quiet",
            "story",
            "autoplay",
        ]
    ),
    "cmd:story:refused",
    "frame:story",
    "claim:seat_link:ok",
    "claim:move_link:ok",
    "claim:move_link:bad_claim",
    "move:person:",
    "move:timer:bot",
    "move:timer:thought",
    "move:timer:think",
    "move:timer:posso_window",
    "move:timer:posso_answer",
    *(f"wait:{w}" for w in ("turn", "presence", "save", "bot", "think", "thought")),
    *(f"state:status:{s}" for s in ("lobby", "playing", "finished")),
    "state:auto",
    "state:forced",
    "state:autoplay",
    # a bot played for a person here who handed it their turns; bots went at
    # the fastest delay; a hand's end took the turns back (tests/sim/promises.py)
    "move:autoplay",
    "autoplay:fast",
    "autoplay:hand_over",
    "state:save pending",
    "state:nobody here",
    "state:closed",
    "crash",
    "crash:save pending",
    "frame:replayed",
    *(f"fault:{f}" for f in ("away", "fail", "lost", "hang")),
]


def run_block(block: int) -> list[str]:
    seeds = range(block * BLOCK, min(QUICK, (block + 1) * BLOCK))
    reached: Counter[str] = Counter()
    failures = [f for f in (run_seed(s, coverage=reached) for s in seeds) if f]
    REACHED[block] = reached
    return failures


@pytest.mark.parametrize("block", BLOCKS)
def test_every_check_holds_over_seeds(block: int) -> None:
    failures = run_block(block)
    assert not failures, "\n\n".join(failures)


def test_every_command_and_state_is_reached() -> None:
    """Across the quick seeds (the blocks above, run again if they were not)."""
    for block in BLOCKS:
        if block not in REACHED:
            run_block(block)
    reached = sum(REACHED.values(), Counter())
    missing = [what for what in MUST_REACH if not reached[what]]
    assert not missing, f"never reached in {QUICK} seeds: {missing}"


@pytest.mark.parametrize("seed", sorted(REGRESSIONS))
def test_the_seeds_that_found_bugs_pass(seed: int) -> None:
    failure = run_seed(seed)
    assert failure is None, f"{REGRESSIONS[seed]}\n{failure}"


def test_a_seed_replays_the_same_trace() -> None:
    """One seed, one run: the trace (room code aside, which the database draws)."""

    def trace(seed: int) -> list[str]:
        sim = Sim(seed, 60)
        sim.run()
        return [line.replace(sim.code, "ROOM") for line in sim.trace]

    for seed in (5, 27):
        first = trace(seed)
        assert len(first) > 40
        assert trace(seed) == first, f"seed {seed} ran differently the second time"


#: seeds run on DbRecords over SQLite in `make test` (about 2 s each)
SQLITE_SEEDS = int(os.environ.get("SIM_SQLITE_SEEDS", "12"))


def run_on(store: str, seeds: range, jobs: int = 2, **env: str) -> str:
    """Seeds on a database, in processes of their own (`SIM_STORE`): the run's
    summary line ("N seeds from F: K failed, in T s"), or all it said if it
    broke before one."""
    which = ["--first", str(seeds.start), "--seeds", str(len(seeds)), "--jobs", str(jobs)]
    done = subprocess.run(
        [sys.executable, "-m", "tests.sim.run", *which],
        capture_output=True,
        text=True,
        timeout=1500,
        env={**os.environ, "SIM_STORE": store, **env},
    )
    print(done.stdout[-3000:])
    summary = [line for line in done.stdout.splitlines() if " seeds from " in line]
    return summary[-1] if summary else done.stdout[-6000:] + done.stderr[-2000:]


def test_every_check_holds_on_sqlite() -> None:
    """The same runs on DbRecords over SQLite, faults injected in front of it."""
    said = run_on("sqlite", range(SQLITE_SEEDS))
    assert said.startswith(f"{SQLITE_SEEDS} seeds from 0: 0 failed"), said


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_every_check_holds_on_postgres() -> None:
    """And on PostgreSQL: 200 seeds, in one database of its own emptied per run."""
    with fresh_pg_database() as url:
        said = run_on("postgres", range(200), jobs=1, SIM_PG_URL=url)  # one at a time
    assert said.startswith("200 seeds from 0: 0 failed"), said


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_planted_bug_is_caught() -> None:
    """Mutation testing of the checks (tests/sim/mutants.py): each planted
    bug, applied to a scratch copy of app/, fails a check within 300 seeds."""
    checks = {m.check for m in MUTANTS}
    assert checks >= {
        "origin", "deadlines", "promises", "hidden cards", "no busy work", "bounded memory",
        "never stuck", "people", "nothing lost",
    }  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "tests.sim.mutants", "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=850,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_two_thousand_more_seeds() -> None:
    """A fixed 2,000 seeds after the quick ones, on every core, so every run is
    the same run."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.sim.run", "--first", "1000", "--seeds", "2000"],
        capture_output=True,
        text=True,
        timeout=2300,
    )
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
