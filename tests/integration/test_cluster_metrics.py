"""The several-process metrics against what two real processes did: a room
owned by one (its lease held, relayed messages timed there) and played from
both, then its owner killed and the room taken over and rebuilt by the other
(tests/integration/test_cluster.py has the same scene without metrics)."""

from __future__ import annotations

import random
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration import test_cluster as cluster
from tests.integration.test_cluster import LEASE, Redis, Server, hostport, owner_port, playing

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.timeout(180)]

TOKEN = "cluster-metrics-" + "t" * 30
stack = cluster.stack  # a fresh PostgreSQL database and a private Redis


def scrape(server: Server) -> dict[str, float]:
    r = httpx.get(
        f"http://{hostport(server)}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert r.status_code == 200, r.text
    return {
        s.name: s.value + 0.0
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
        if not s.labels
    }


def test_leases_relays_takeovers_and_rebuilds_are_counted(stack: tuple[str, Redis]) -> None:
    database, redis = stack
    owner, other = cluster.servers(database, redis, 2, METRICS="true", METRICS_TOKEN=TOKEN)
    rng = random.Random(37)
    try:
        # Ann and Cy are relayed from `other`, Bob is on the owner
        code, _seats = playing(owner, [other, owner, other], rng, moves=4)
        first = owner_port(database, redis, code)  # opened through `owner`: its own
        at_owner, at_other = scrape(owner), scrape(other)
        assert at_owner["cardroom_leases_held"] == 1 and at_other["cardroom_leases_held"] == 0
        assert at_owner["cardroom_relay_seconds_count"] > 0  # relayed messages, timed there
        assert at_other["cardroom_relay_seconds_count"] == 0
        assert at_owner["cardroom_takeovers_total"] == 0  # a new room: nobody owned it before
        killed = time.monotonic()
        owner.kill()
        while owner_port(database, redis, code) in (None, first):
            assert time.monotonic() - killed < LEASE + 5, "no takeover"
            time.sleep(0.05)
        after = scrape(other)
        while after["cardroom_rebuilds_total"] == 0:  # the lease is taken before the rebuild
            assert time.monotonic() - killed < LEASE + 10, "no rebuild after the takeover"
            time.sleep(0.05)
            after = scrape(other)
        assert after["cardroom_leases_held"] == 1
        assert after["cardroom_takeovers_total"] == 1
        assert after["cardroom_rebuilds_total"] == 1
        assert after["cardroom_rebuild_seconds_count"] == 1
    finally:
        owner.stop()
        other.stop()
