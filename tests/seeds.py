"""Where every game a test deals gets its seed: `TEST_SEED` (0 unless set),
printed in the header of every run, and a name, so one number repeats a
whole run and each test's deals stay its own.  Servers a test starts (in this
process or as a uvicorn process, which inherits the environment) deal from
`DEAL_SEED`, which conftest.py sets to the same number."""

from __future__ import annotations

import os
import random
from collections.abc import Callable

TEST_SEED = int(os.environ.get("TEST_SEED", "0"))


def seeded(name: str) -> Callable[[], int]:
    """A room's or a manager's source of game seeds, fixed by TEST_SEED and `name`."""
    rng = random.Random(f"{TEST_SEED}:{name}")
    return lambda: rng.getrandbits(62)
