"""Running a server under valgrind's callgrind, and steering its counters.

A server starts with its instrumentation off (`--instr-atstart=no`) and a
bench turns it on (`instrument`) once its rooms are set up, before the
warm-up that precedes any measured window.  Python importing the app under
full instrumentation took 110 s to open its port here, against 19 s with it
off; the figures cannot tell the difference, since every window's count is
taken after a zero (`zero`) that comes later still.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def wrap(
    cmd: list[str],
    out: Path | str,
    cache_sim: bool = False,
    last_level: str = "",
    branch_sim: bool = False,
) -> list[str]:
    """`cmd` under callgrind, counting nothing yet; its counts go to `<out>.<pid>`.
    `cache_sim`: callgrind also simulates the caches and counts their misses
    (first level for instructions and data, and the last level), at about
    twice the run's time.  `last_level` ("size,associativity,line size" in
    bytes, valgrind's --LL) sizes the simulated last level: by default valgrind
    takes what the machine reports, which on a VM may be the host's whole
    cache rather than this guest's share of it.  `branch_sim`: callgrind also
    simulates branch prediction and counts the branches it mispredicts
    (conditional and indirect: the interpreter's dispatch is mostly the
    latter)."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        *(["--cache-sim=yes"] if cache_sim or last_level else []),
        *([f"--LL={last_level}"] if last_level else []),
        *(["--branch-sim=yes"] if branch_sim else []),
        f"--callgrind-out-file={out}.%p",
        *cmd,
    ]


def control(pid: int, *options: str) -> None:
    """Ask the callgrind run `pid` to do something (callgrind_control's options)."""
    subprocess.run(["callgrind_control", *options, str(pid)], capture_output=True, check=False)


def instrument(pid: int) -> None:
    """Start counting (a server starts with counting off: see above)."""
    control(pid, "--instr=on")


def zero(pid: int) -> None:
    control(pid, "--zero")


def dump(pid: int) -> None:
    """Write the counts since the last zero or dump, and zero them."""
    control(pid, "--dump")
