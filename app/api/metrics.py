"""`/metrics` for Prometheus: only with METRICS=true, and only to a scraper
holding the token (METRICS_TOKEN), since the figures say how busy the card
room is and when.  Behind the compose file's Caddy, /metrics is refused to
the public before the token is even asked for (deploy/Caddyfile); Prometheus
scrapes each replica on the inside network (deploy/prometheus.yml).

The counters and histograms are the process's (app/core/metrics.py); the
gauges here are read from the rooms when Prometheus asks, so keeping them
costs the rooms nothing between scrapes.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.core import metrics
from app.core.config import Settings
from app.rooms.manager import RoomManager

NO_TOKEN = (
    "METRICS=true needs METRICS_TOKEN: the token a scraper sends as "
    "`Authorization: Bearer <token>` (make one with `openssl rand -hex 24`)"
)


class LiveRooms(Collector):
    """What the app holds right now, counted when Prometheus asks."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        state = self.state
        manager: RoomManager = state.rooms  # typed, so a room's parts are checked
        rooms = GaugeMetricFamily(
            "cardroom_rooms", "Open rooms this process holds, by game and status",
            labels=["game", "status"],
        )  # fmt: skip
        counts = Counter((r.table.game.name, r.table.status) for r in manager.rooms.values())
        for (game, status), n in sorted(counts.items()):
            rooms.add_metric([game, status], n)
        yield rooms
        yield GaugeMetricFamily(
            "cardroom_people_connected",
            "People with at least one socket open to a room this process holds",
            value=sum(len(r.delivery.conns) for r in manager.rooms.values()),
        )
        yield GaugeMetricFamily(
            "cardroom_leases_held", "Rooms this process owns the lease of (several processes)",
            value=len(getattr(manager, "epochs", ())),
        )  # fmt: skip
        # _SocketCounter (app/main.py) adds one to `socket_sessions` as a
        # socket opens and one as it closes
        sessions, open_now = state.socket_sessions, state.sockets_open
        yield GaugeMetricFamily("cardroom_sockets_open", "WebSockets open", value=open_now)
        yield CounterMetricFamily(
            "cardroom_sockets_opened", "WebSockets opened", value=(sessions + open_now) // 2
        )
        yield CounterMetricFamily(
            "cardroom_sockets_closed", "WebSockets closed", value=(sessions - open_now) // 2
        )


def serve_metrics(app: FastAPI, settings: Settings) -> None:
    """Add `/metrics` when METRICS=true (and nothing otherwise)."""
    if not settings.metrics:
        return
    if not settings.metrics_token:
        raise SystemExit(NO_TOKEN)
    metrics.enable()
    live = CollectorRegistry()
    live.register(LiveRooms(app.state))
    expected = f"Bearer {settings.metrics_token}".encode()

    async def scrape(request: Request) -> Response:
        given = request.headers.get("authorization", "").encode()
        if not secrets.compare_digest(given, expected):
            return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
        body = generate_latest(metrics.REGISTRY) + generate_latest(live)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    app.add_api_route("/metrics", scrape, methods=["GET"], include_in_schema=False)
