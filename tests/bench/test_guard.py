"""The hot path guard (bench/guard.py) as a test: the card room's instructions
per action, under callgrind, against the bare fan-out server's in the same
run.  Slow (a few minutes): `make test-slow` runs it, `make test` does not;
`make test` runs the guard's client at no pace against a server without
valgrind, where every window must still play the same games.

It fails under what the card room must hold (`HELD`, 73%): 3 points over
the brief's floor (`FLOOR`, 70%) and 5 under the card room's figure (77.8%
in README's run, its windows 77.7% to 78.3%), a margin for a busy machine's
late turns, which add the server's idle work to each window.  Every window
plays the same games with the same moves, so the windows differ only by the
machine; it fails too if two of them counted different moves."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import callgrind
from bench.guard import FLOOR, HELD, _summaries, client_command, server_env
from bench.load import _free_port, _start_server, stop_server
from tests.services import IN_CI

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.slow
@pytest.mark.timeout(2400)  # ~4.5 minutes on a quiet machine; a busy one slows valgrind
def test_the_card_room_costs_at_most_a_floor_over_bare(tmp_path: Path) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        if IN_CI:
            pytest.fail("the hot path guard needs valgrind (callgrind)")
        pytest.skip("valgrind is not installed")
    out = tmp_path / "guard.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "guard.py"), "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=2300,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    for server in report["servers"].values():
        assert server["errors"] == 0, f"{server['server']}: refusals during the scripted play"
        assert all(w["actions"] > 0 for w in server["windows"])
    # every window deals the same games and picks the same moves (DEAL_CYCLE),
    # so they differ only by the machine: the same count of moves in each
    windows = report["servers"]["batched"]["windows"]
    assert all(w["started"] == 0 for w in windows), f"games started inside a window: {windows}"
    played = [w["actions"] for w in windows]
    assert len(set(played)) == 1, f"the windows played different games: {played} moves"
    assert report["ratio"] >= HELD, (
        f"bare / card room is {100 * report['ratio']:.1f}% of instructions per action, "
        f"under the {100 * HELD:.0f}% it must hold (the floor: {100 * FLOOR:.0f}%):\n"
        f"{done.stdout}"
    )


@pytest.mark.timeout(600)
def test_every_window_plays_the_same_games_when_every_turn_is_late(tmp_path: Path) -> None:
    """The guard's client against the card room without valgrind, at no pace
    at all (`--slot 0`): every turn is late and waits in the drain for the
    last move's views, as turns do on a machine slow enough under valgrind.
    CI's guard once counted 895, 961, 902, 902 and 902 moves in its windows:
    a room whose game ended during that wait was still taken for playing and
    sent a rematch, a game more in the window and every later deal shifted.
    Each window must play the same games (the guard's figure is per action
    over them), so each counts the same moves."""
    rooms = 4  # enough for one game to end while another plays on
    port = _free_port()
    server = _start_server(
        "batched", port, log=tmp_path / "server.log", extra_env=server_env(rooms, tmp_path)
    )
    try:
        script = argparse.Namespace(rooms=rooms, slot=0.0, bare_actions=500, windows=3)
        done = subprocess.run(
            client_command("batched", port, 0, script),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=500,
        )
    finally:
        stop_server(server)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    windows = report["windows"]
    print(windows)
    assert report["errors"] == 0, "refusals during the scripted play"
    assert all(w["late"] > 0 for w in windows), f"no turn waited on the last: {windows}"
    assert all(w["started"] == 0 for w in windows), f"games started inside a window: {windows}"
    played = [w["actions"] for w in windows]
    assert len(set(played)) == 1, f"the windows played different games: {played} moves"


def test_each_dump_is_read_by_event_with_or_without_the_caches(tmp_path: Path) -> None:
    """The guard reads a dump's `events:` and `summary:` lines by name: the
    instructions (`Ir`) for its figure, and with `--cache-sim` and
    `--branch-sim` the caches' misses and the mispredicted branches, which
    callgrind lists after them (bench/callgrind.py `wrap`)."""
    out = tmp_path / "server"
    plain = "version: 1\ncmd: python\nevents: Ir\nfn=(1) main\n3 7\nsummary: 1200\ntotals: 1200\n"
    caches = (
        "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n"
        "summary: 600 100 50 7 8 3 0 1 2 40 5 10 4\n"
    )
    (tmp_path / "server.42.1").write_text(plain)
    (tmp_path / "server.42.2").write_text(caches)
    first, second = _summaries(out, 42, 2)
    assert first == {"Ir": 1200}
    assert second["Ir"] == 600 and second["D1mr"] == 8 and second["DLmw"] == 2
    assert second["Bcm"] == 5 and second["Bim"] == 4
    assert "--cache-sim=yes" in callgrind.wrap(["python"], out, cache_sim=True)
    assert "--cache-sim=yes" not in callgrind.wrap(["python"], out)
    # a last level of a given size simulates the caches, at that size
    sized = callgrind.wrap(["python"], out, last_level="1048576,16,64")
    assert "--cache-sim=yes" in sized and "--LL=1048576,16,64" in sized
    assert "--branch-sim=yes" in callgrind.wrap(["python"], out, branch_sim=True)
