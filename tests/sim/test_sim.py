"""The room simulator over many seeds (tests/sim/world.py; docs/architecture.md,
"The simulator").  `make test` runs the first `SIM_SEEDS` (150) seeds, `make
test-slow` a fixed 2,000 more, and `make sim SEEDS=n` any number; a failure
names its seed, and `SIM_SEED=<n> make sim` replays it with its whole trace."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.sim.run import run_seed
from tests.sim.world import Sim

QUICK = int(os.environ.get("SIM_SEEDS", "150"))
BLOCK = 25

#: seeds that found a bug, kept so it stays found
REGRESSIONS = {
    14: "a kick acknowledged while storage was away was lost in a crash: saves now retry",
    34: "a host role handed to someone away was never passed on: no presence wait was set",
    64: "a leave acknowledged while storage was away was lost in a crash",
    80: "a new game's presence wait was taken for the last game's, already fired",
    82: "a join while storage was away raised instead of answering storage_error",
    379: "a leave stored only after a crash that came first: allowed only with a save pending",
    1186: "a save whose answer was lost, then a join undone by a leave: the leave was not written",
    100274: "two 5H in one Posso set (several decks): the leak check counted the shown one once",
    100684: "a bot thought about the game before a move settled after an outage, and was refused",
    103786: "a room closed by its last leaver while storage was away was let go unstored",
    104075: "a save in flight at a crash was not seen as pending by the crash check",
    104673: "a closed room let go before its close was stored came back open on the next join",
    201258: "a rebuild whose finished games could not be read kept a stale tally and added to it",
}


@pytest.mark.parametrize("block", range((QUICK + BLOCK - 1) // BLOCK))
def test_every_check_holds_over_seeds(block: int) -> None:
    seeds = range(block * BLOCK, min(QUICK, (block + 1) * BLOCK))
    failures = [f for f in (run_seed(s) for s in seeds) if f]
    assert not failures, "\n\n".join(failures)


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
