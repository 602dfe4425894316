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


def test_metrics_without_a_token_refuse_to_start() -> None:
    with pytest.raises(SystemExit) as stopped:
        create_app(Settings(metrics=True), MemoryRecords())
    assert str(stopped.value) == NO_TOKEN
