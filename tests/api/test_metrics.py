"""`/metrics` exists only with METRICS=true, and never without a token
(what it serves is checked against a real evening in
tests/integration/test_evening.py)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.api.metrics import NO_TOKEN
from app.core.config import Settings
from app.main import create_app
from app.store.records import MemoryRecords


def test_no_metrics_unless_asked_for() -> None:
    with TestClient(create_app(Settings(), MemoryRecords())) as client:
        r = client.get("/metrics", headers={"Authorization": "Bearer anything"})
        assert r.status_code == 404 and "cardroom_" not in r.text


def test_metrics_are_refused_without_the_token() -> None:
    token = "metrics-token-" + "m" * 30
    app = create_app(Settings(metrics=True, metrics_token=token), MemoryRecords())
    with TestClient(app) as client:
        assert client.get("/metrics").status_code == 401
        wrongs = (f"Bearer {token[:-1]}", token, "Bearer", f"Basic {token}", f"Bearer {token}x")
        for wrong in wrongs:
            r = client.get("/metrics", headers={"Authorization": wrong})
            assert r.status_code == 401 and "cardroom_" not in r.text, wrong
            assert r.headers["www-authenticate"] == "Bearer"
        served = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert served.status_code == 200 and "cardroom_rooms" in served.text


def test_metrics_without_a_token_refuse_to_start() -> None:
    with pytest.raises(SystemExit) as stopped:
        create_app(Settings(metrics=True), MemoryRecords())
    assert str(stopped.value) == NO_TOKEN
