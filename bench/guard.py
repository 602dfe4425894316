"""The hot path guard: instructions per action of the card room against the
bare fan-out server (bench/bare_server.py), both under valgrind's callgrind,
in the same run.

    .venv/bin/python bench/guard.py            # or: make bench-guard

Wall-clock figures on a shared machine swing by a quarter; instructions do
not.  What is left to vary is how much work each action shares with others:
a server that falls behind sends several changes in one frame, wakes its loop
less often, and so looks cheaper per action the slower the machine is.  So
the load here is paced, not saturating: one scripted stream of actions, one
every `--slot` seconds, the rooms taking turns, and never two in flight: each
waits until the last one's change has reached all its players, so each change
goes out alone whatever the machine's speed.  A turn that starts late
because of that is counted as `late`: it stretches the run, and the figure
moves only by the server's idle work per second (keep-alive pings, the
collector's housekeeping) spread over fewer actions - a few percent when a
shared machine at a load of 10 made most turns late.
Each action is the seat to move playing one of its legal moves, picked by a
generator seeded with the room's number; each game is dealt from `DEAL_SEED`;
hashes are seeded (`PYTHONHASHSEED`).  The actions and batches are therefore
the same whatever the machine's speed.  Every window plays the same games
with the same moves (`DEAL_CYCLE` deals the same `--rooms` games over and
over, and each room picks its moves from its seed again at each new game), so
the windows differ only by the machine: when each dealt the next games, which
games they were put up to 2.4% between them.

Both servers start at once under callgrind (the card room storing every
action in a freshly migrated SQLite file, as `make run` does, but on a
memory file system: a disk's flush times would only add waits), counting
nothing until their rooms are set up (bench/callgrind.py: starting is five
times faster so).  After a warm-up game the counters are zeroed; each of
`--windows` windows is then one whole game in every room (the bare server:
`--bare-actions` actions), the counters dumped at its end (a dump also
zeroes them) and again after the next games' starts, so each window holds
the same kind of work.  Each window gives one figure per server: its
instructions, starts included, over its moves.  The report is each server's
median, the spread of its windows ((max - min) / median), and bare's median
over the room's.  `--json FILE` also writes them (tests/bench/test_guard.py
reads that and fails under the floor).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import callgrind as callgrind_run  # noqa: E402
from bench.load import (  # noqa: E402
    PYTHON,
    RoomDriver,
    _free_port,
    _setup_bare,
    _setup_real,
    _start_server,
    stop_server,
)

#: the floor the brief sets for bare ÷ room (docs/architecture.md, "Tests and measurements")
FLOOR = 0.70
#: what the card room must hold, 3 points over the floor: the card room is
#: at 77.8% in README's run (its windows 77.7% to 78.3%), and a busy machine's
#: late turns have added up to ~3% to a window's instructions, so 73% fails
#: on a drift of about 6% of an action, not on a slow machine.
#: tests/bench/test_guard.py fails below it.
HELD = 0.73
#: the goal of issue 36 (75% of bare)
GOAL = 0.75


# --------------------------------------------------------------------- client


async def _drain(rooms: list[RoomDriver], limit: float = 120.0) -> None:
    """Wait until no room has a change in flight (every action answered)."""
    deadline = time.monotonic() + limit
    while any(r.pending is not None for r in rooms):
        if time.monotonic() > deadline:
            raise SystemExit("a room's change was never answered: is the server alive?")
        await asyncio.sleep(0.02)


def _over(room: RoomDriver) -> bool:
    """The room's game has ended (the card room; the bare server's never does)."""
    view = room.players[0].view or {}
    return (view.get("room") or {}).get("status") == "finished"


async def _play(rooms: list[RoomDriver], slot: float, actions: int | None) -> int:
    """Turns at one every `slot` seconds, the rooms in turn, until every
    room's game has ended (or, `actions` given, for that many turns).  A turn
    waits until the last one's change has reached all its players, so the
    server never has two actions in hand at once, however slow it is; a turn
    that could not start on time is counted (late: the machine was slower
    than the pace, which stretches the run)."""
    loop = asyncio.get_running_loop()
    late = turns = 0
    next_t = loop.time()
    while actions is None or turns < actions:
        await _drain(rooms)
        # which rooms still play is read after the drain: the move it waited
        # for may have ended a game, and a room read as playing before it
        # would be sent a rematch (`RoomDriver.act`), a game more in this
        # window and every later deal shifted (DEAL_CYCLE) - on a machine
        # slow enough to make turns late, and only there
        playing = [r for r in rooms if not _over(r)] if actions is None else rooms
        if not playing:
            break
        if loop.time() > next_t + slot / 2:
            late += 1
            next_t = loop.time()
        room = playing[turns % len(playing)]
        turns += 1
        if not room.act():
            raise SystemExit(f"room {room.index} could not act: its players' views disagree")
        next_t += slot
        await asyncio.sleep(max(0.0, next_t - loop.time()))
    await _drain(rooms)
    return late


async def _rematch(rooms: list[RoomDriver]) -> None:
    """A new game in every room, one room after another, and each room's
    moves picked from the start again: the server deals the same `--rooms`
    games over and over (DEAL_CYCLE) in the rooms' order, so every window
    plays the same games with the same moves."""
    for room in rooms:
        room.rng.seed(room.index)
        assert room.act(), "a room whose game ended could not ask for a rematch"
        await _drain([room])


async def client_main(args: argparse.Namespace) -> dict[str, Any]:
    """Card room: a warm-up game in every room, then per window one whole game
    in every room (dumped) and the next games' starts (dumped apart), so each
    window holds the same kind of work.  Bare: windows of `--bare-actions`."""
    bare = args.server == "bare"
    if bare:
        rooms = await _setup_bare(args.port, args.rooms)
    else:
        base = f"http://127.0.0.1:{args.port}"
        rooms = await _setup_real(base, [args.port], args.rooms, "bigtwo", batch=True)
    stats = rooms[0].stats
    actions = args.bare_actions if bare else None

    def steer(step: Callable[[int], None]) -> None:
        """Callgrind's counters; a server not under callgrind (no pid) has none."""
        if args.server_pid:
            step(args.server_pid)

    steer(callgrind_run.instrument)  # from the warm-up on (bench/callgrind.py)
    await _play(rooms, args.slot, actions)
    if not bare:
        await _rematch(rooms)
    steer(callgrind_run.zero)
    windows: list[dict[str, int]] = []
    for _ in range(args.windows):
        stats.measuring, stats.actions, stats.changes = True, 0, 0
        late = await _play(rooms, args.slot, actions)
        stats.measuring = False
        steer(callgrind_run.dump)
        if not bare:
            await _rematch(rooms)
            steer(callgrind_run.dump)
        # a game started inside a window (a rematch: a change that is no
        # move) is a game more than the others' and shifts every later deal
        started = stats.changes - stats.actions
        windows.append({"actions": stats.actions, "late": late, "started": started})
    for r in rooms:
        for p in r.players:
            with contextlib.suppress(Exception):
                p.ws.close()
    return {"windows": windows, "errors": stats.errors}


# --------------------------------------------------------------------- parent


def _summaries(out: Path, pid: int, count: int) -> list[dict[str, int]]:
    """Each dump's counts by event (`Ir`: instructions; with `--cache-sim`,
    the caches' misses too), from its `events:` and `summary:` lines
    (`<out>.<pid>.<n>`)."""
    found: list[dict[str, int]] = []
    for n in range(1, count + 1):
        dump = Path(f"{out}.{pid}.{n}")
        for _ in range(100):  # the dump may still be being written
            text = dump.read_text(errors="replace") if dump.exists() else ""
            lines = text.splitlines()
            events = [x.split()[1:] for x in lines if x.startswith("events:")]
            summary = [x.split()[1:] for x in lines if x.startswith("summary:")]
            if events and summary:
                found.append(dict(zip(events[0], map(int, summary[0]), strict=True)))
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"no summary in {dump}")
    return found


#: callgrind's cache misses (`--cache-sim`): first level for instructions and
#: data (read, write), last level the same; and its mispredicted branches
#: (`--branch-sim`), conditional and indirect
MISSES = ("I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bcm", "Bim")


def server_env(rooms: int, data: Path) -> dict[str, str]:
    """What a server of the guard runs with: the same games dealt in every
    window, the same hashes, and its records in `data`."""
    return {
        "PYTHONHASHSEED": "0",
        "DEAL_SEED": "36",
        # one game a room a window, the same ones each window (`_rematch`)
        "DEAL_CYCLE": str(rooms),
        # in memory: a disk's flush times would decide how many actions overlap
        "BENCH_DATABASE_URL": f"sqlite+aiosqlite:///{data / 'cardroom.db'}",
    }


def client_command(kind: str, port: int, server_pid: int, args: argparse.Namespace) -> list[str]:
    """The client process that plays the script against the server on `port`
    (`server_pid` 0: a server not under callgrind, whose counters it leaves)."""
    return [
        PYTHON, __file__, "--client", "--server", kind, "--port", str(port),
        "--server-pid", str(server_pid), "--rooms", str(args.rooms),
        "--slot", str(args.slot), "--bare-actions", str(args.bare_actions),
        "--windows", str(args.windows),
    ]  # fmt: skip


def _measure(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """One server under callgrind, driven by one client process."""
    out = Path(tempfile.mkdtemp(prefix=f"cardroom-guard-{kind}-")) / "server"
    port = _free_port()
    data = Path(tempfile.mkdtemp(prefix="cardroom-guard-", dir="/dev/shm"))
    env = server_env(args.rooms, data)
    before = kind.partition(":")[2]  # "before:<rev>": the card room at that revision
    if kind == "metrics":  # the card room with its metrics on (issue: under 3% more)
        env |= {"METRICS": "true", "METRICS_TOKEN": "guard"}
    server = "before" if before else ("batched" if kind == "metrics" else kind)
    proc = _start_server(
        server, port, out, before, extra_env=env,
        cache_sim=args.cache_sim, last_level=args.last_level, branch_sim=args.branch_sim,
    )  # fmt: skip
    try:
        cmd = client_command(kind, port, proc.pid, args)
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"{kind} client failed: {done.stderr[-2000:]}")
        client = json.loads(done.stdout.strip().splitlines()[-1])
        dumps = _summaries(out, proc.pid, args.windows * (1 if kind == "bare" else 2))
    finally:
        stop_server(proc)
        shutil.rmtree(data, ignore_errors=True)
        if args.keep:  # for callgrind_annotate
            keep = Path(args.keep) / kind.replace(":", "-")
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(out.parent, keep)
        shutil.rmtree(out.parent, ignore_errors=True)  # the dumps, read by now
    # a window's game and the starts of the next games, together
    step = len(dumps) // args.windows
    windows = [dumps[i * step : (i + 1) * step] for i in range(args.windows)]
    counts = [sum(d["Ir"] for d in w) for w in windows]
    if not all(counts):  # a figure of nothing would pass or fail for no reason
        raise RuntimeError(f"{kind}: callgrind counted nothing in a window: {counts}")
    moves = sum(w["actions"] for w in client["windows"])
    per = [c / max(1, w["actions"]) for c, w in zip(counts, client["windows"], strict=True)]
    return {
        "server": kind,
        "per_action": per,
        "median": statistics.median(per),
        "spread": (max(per) - min(per)) / statistics.median(per),
        "windows": client["windows"],
        "errors": client["errors"],
        # every window's misses over every window's moves (`--cache-sim`, `--branch-sim`)
        "misses_per_action": {
            e: sum(d[e] for d in dumps) / max(1, moves) for e in MISSES if e in dumps[0]
        },
    }


def _metrics_cost(results: dict[str, Any]) -> float | None:
    """What metrics on cost over off, printed, when both were measured."""
    if "metrics" not in results or "batched" not in results:
        return None
    cost = float(results["metrics"]["median"] / results["batched"]["median"] - 1)
    print(f"metrics on / off: {100 * cost:+.1f}% instructions per action")
    return cost


def parent_main(args: argparse.Namespace) -> dict[str, Any]:
    befores = [f"before:{rev}" for rev in args.before.split(",") if rev]
    kinds = [*args.servers.split(","), *befores]
    t0 = time.monotonic()
    # the servers run side by side: their instructions do not depend on it,
    # and the pacing leaves each far from a full core even under valgrind
    with ThreadPoolExecutor(len(kinds)) as pool:
        results = dict(zip(kinds, pool.map(lambda k: _measure(k, args), kinds), strict=True))
    if "batched" not in results or "bare" not in results:
        for r in results.values():
            print(f"{r['server']:8} {r['median']:>10,.0f} ({r['per_action']})")
        _metrics_cost(results)
        return {"servers": results, "ratio": float("nan")}
    room, bare = results["batched"], results["bare"]
    by_window = [b / r for b, r in zip(bare["per_action"], room["per_action"], strict=True)]
    report = {
        "servers": results,
        "ratio": bare["median"] / room["median"],
        "ratio_by_window": by_window,
        "seconds": round(time.monotonic() - t0, 1),
        "settings": {k: getattr(args, k) for k in ("rooms", "slot", "bare_actions", "windows")},
    }
    for r in results.values():
        late = sum(w["late"] for w in r["windows"])
        figures = ", ".join(f"{x:,.0f}" for x in r["per_action"])
        print(
            f"{r['server']:16} {r['median']:>10,.0f} instructions per action (median of "
            f"{len(r['per_action'])} windows: {figures}; spread {100 * r['spread']:.1f}%; "
            f"{late} late turns, {r['errors']} refusals)"
        )
        if r["misses_per_action"]:
            misses = ", ".join(f"{e} {n:,.0f}" for e, n in r["misses_per_action"].items())
            print(f"{'':16} misses per action: {misses}")
    for kind in befores:
        print(f"bare / {kind}: {100 * bare['median'] / results[kind]['median']:.1f}%")
    report["metrics_cost"] = _metrics_cost(results)
    print(
        f"bare / card room: {100 * report['ratio']:.1f}% (by window: "
        f"{', '.join(f'{100 * x:.1f}%' for x in by_window)}); held {100 * HELD:.0f}%, "
        f"floor {100 * FLOOR:.0f}%, "
        f"goal {100 * GOAL:.0f}%; {report['seconds']:.0f} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return report


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    # 10 rooms at 40 ms: which games a window deals is part of its spread
    # (two runs of 8 rooms had their windows in much the same order), so more
    # games a window, in about the same time (8 gave spreads of 1.2% to 2.0%,
    # 10 gave 0.6% and 1.3%); bare's windows stay 20 s long, one round of
    # uvicorn's keep-alive pings each (12 s windows held none or one: 1.9%)
    ap.add_argument("--rooms", type=int, default=10, help="rooms of four players")
    ap.add_argument("--slot", type=float, default=0.04, help="seconds between two actions")
    ap.add_argument(
        "--bare-actions", type=int, default=500, help="the bare server's actions per window"
    )
    ap.add_argument("--windows", type=int, default=5, help="windows (figures) per server")
    ap.add_argument(
        "--before",
        default="",
        help="git revisions, comma-separated: also measure the card room as it stood at each",
    )
    ap.add_argument(
        "--servers",
        default="batched,bare",
        help="batched: the card room; bare: bench/bare_server.py (both for the ratio); "
        "metrics: the card room with METRICS=true (its cost against batched)",
    )
    ap.add_argument("--json", default="", help="also write the figures here")
    ap.add_argument(
        "--cache-sim",
        action="store_true",
        help="callgrind also simulates the caches: each server's misses per action "
        "(first and last level), at about twice the time",
    )
    ap.add_argument(
        "--last-level",
        default="",
        metavar="SIZE,ASSOC,LINE",
        help="with the caches simulated, the last level's geometry in bytes "
        "(valgrind's --LL, e.g. 1048576,16,64 for this machine's 1 MB L2 a core)",
    )
    ap.add_argument(
        "--branch-sim",
        action="store_true",
        help="callgrind also simulates branch prediction: each server's mispredicted "
        "branches per action",
    )
    ap.add_argument(
        "--keep", default="", help="copy each server's callgrind dumps into DIR/<server>"
    )
    ap.add_argument(
        "--check", action="store_true", help="exit 1 if bare / room is under what it holds (HELD)"
    )
    # client mode (internal)
    ap.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--server", default="batched", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    # 0: the server is not under callgrind (tests/bench/test_guard.py's pacing test)
    ap.add_argument("--server-pid", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        import uvloop

        print(json.dumps(uvloop.run(client_main(args))))
        return
    report = parent_main(args)
    if args.check and not report["ratio"] >= HELD:
        sys.exit(1)


if __name__ == "__main__":
    main()
