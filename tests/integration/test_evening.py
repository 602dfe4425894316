"""What a real server says about a scripted evening (tests/integration/evening.py),
run once with METRICS=true and LOG_FORMAT=json:

- its metrics (app/api/metrics.py) match what the evening did, count by
  count, carry no room code, person or game id, and are refused to anyone
  without the token;
- after a restart, the first use of a room counts a rebuild;
- its log is one JSON object per line, the access log included, names the
  room and the game of what happened in them, and holds none of the
  evening's secrets (seat tokens, cookies, passwords, link secrets, a push
  subscription's keys).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.evening import JOINS_PER_MINUTE, EveningRun, evening
from tests.integration.server import LoggedServer
from tests.services import OPEN_DOORS_ENV

pytestmark = pytest.mark.timeout(300)

TOKEN = "metrics-token-" + "m" * 30


#: scraped samples: (name, sorted labels) -> value
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@dataclass
class Evening:
    server: LoggedServer
    run: EveningRun
    #: the metrics as scraped after the evening, and after a restart and one rebuild
    after: Samples
    restarted: Samples
    exposition: str
    log: str


def scrape(server: LoggedServer) -> tuple[str, Samples]:
    r = httpx.get(f"{server.base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }
    return r.text, samples


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evening]:
    env = {
        **OPEN_DOORS_ENV,
        "JOINS_PER_MINUTE": str(JOINS_PER_MINUTE),
        "METRICS": "true",
        "METRICS_TOKEN": TOKEN,
        "LOG_FORMAT": "json",
    }
    server = LoggedServer(tmp_path_factory.mktemp("evening"), env)
    try:
        run = evening(server)
        exposition, after = scrape(server)
        server.stop()
        server.start()
        room = httpx.get(f"{server.base}/api/rooms/{run.codes['posso']}")
        assert room.status_code == 200, room.text
        _, restarted = scrape(server)
        yield Evening(server, run, after, restarted, exposition, server.stop())
    finally:
        if server.proc.poll() is None:
            server.stop()


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_each_metric_counts_what_the_evening_did(night: Evening) -> None:
    m, run = night.after, night.run
    for game, status in (("bigtwo", "finished"), ("posso", "lobby"), ("possum", "lobby")):
        assert value(m, "cardroom_rooms", game=game, status=status) == 1, (game, status)
    assert sum(v for (name, _), v in m.items() if name == "cardroom_rooms") == 3
    for (kind, result, code), n in run.handled.items():
        got = value(m, "cardroom_actions_total", kind=kind, result=result, code=code)
        assert got == n, (kind, result, code)
    handled = sum(run.handled.values())
    assert sum(v for (name, _), v in m.items() if name == "cardroom_actions_total") == handled
    assert value(m, "cardroom_action_seconds_count") == handled
    assert value(m, "cardroom_rate_limited_total", door="joins") == run.refused_joins == 1
    assert value(m, "cardroom_sockets_opened_total") == run.sockets
    assert value(m, "cardroom_sockets_closed_total") == run.sockets
    assert value(m, "cardroom_sockets_open") == 0
    assert value(m, "cardroom_people_connected") == 0
    # the bots' moves: each thought about, each a timer firing, each appended
    bots = value(m, "cardroom_bot_think_seconds_count", level="normal")
    assert bots > 0
    assert value(m, "cardroom_timer_firings_total") >= bots
    humans = run.handled["action", "applied", ""]
    assert value(m, "cardroom_append_batch_size_sum") >= bots + humans
    assert value(m, "cardroom_append_batch_seconds_count") > 0
    for quiet in ("cardroom_rebuilds_total", "cardroom_takeovers_total",
                  "cardroom_database_errors_total", "cardroom_redis_errors_total"):  # fmt: skip
        assert value(m, quiet) == 0, quiet
    assert value(m, "cardroom_leases_held") == 0  # one process: no leases
    for outcome in ("sent", "gone", "failed"):  # nobody was away on their turn
        assert value(m, "cardroom_push_total", outcome=outcome) == 0


def test_a_restart_counts_each_room_it_rebuilds(night: Evening) -> None:
    m = night.restarted
    assert value(m, "cardroom_rebuilds_total") >= 1
    assert value(m, "cardroom_rebuild_seconds_count") == value(m, "cardroom_rebuilds_total")
    assert value(m, "cardroom_rooms", game="posso", status="lobby") == 1


def test_no_label_names_a_room_person_or_game(night: Evening) -> None:
    labels = {v for (_, pairs) in night.after for k, v in pairs if k != "le"}  # le: a bound
    ids = {*night.run.codes.values(), *night.run.people, *map(str, night.run.game_ids)}
    assert not labels & ids
    for name in (*night.run.codes.values(), *night.run.people):  # nor anywhere else
        assert name not in night.exposition


def test_the_log_is_json_lines_naming_room_and_game(night: Evening) -> None:
    lines = [json.loads(line) for line in night.log.splitlines() if line.strip()]
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    code, game = night.run.codes["bigtwo"], night.run.game_ids[0]
    said = {
        line["message"].rsplit(" ", 1)[1]
        for line in lines
        if line.get("room") == code and line.get("game") == game
    }
    assert {"started", "over"} <= said, said
    access = [line for line in lines if line["logger"] == "uvicorn.access"]
    refused = f"/api/rooms/{night.run.codes['posso']}/join"
    assert [a["status"] for a in access if a["path"] == refused] == [200, 429]
    assert all(a["method"] and a["client"] for a in access)


def test_no_secret_the_evening_handed_out_reaches_the_log(night: Evening) -> None:
    secrets = set(night.run.secrets)
    assert len(secrets) >= 20
    found = [s for s in secrets if s in night.log]
    assert not found, f"{len(found)} secret(s) in the log"
    assert "Traceback" not in night.log and '"level": "ERROR"' not in night.log
