"""The `monitoring` profile keeps its promises: Prometheus scrapes every
replica with the token, Grafana loads the dashboard from its own data
source, and every metric the dashboard queries is one the app serves."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.core.config import Settings
from app.main import create_app
from app.store.records import MemoryRecords
from tests.deploy.test_docker import MONITORING, compose, replicas

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "cardroom.json"
#: the sample names each kind of family serves
SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_count", "_sum"),
    "gauge": ("",),
}


def _exprs() -> list[str]:
    dash: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return [t["expr"] for panel in dash["panels"] for t in panel["targets"]]


def _served() -> set[str]:
    """Every sample name a fresh app serves with METRICS=true (a family with
    no sample yet, such as refusals by code, counts by its kind)."""
    app = create_app(Settings(metrics=True, metrics_token="t"), MemoryRecords())
    with TestClient(app) as client:
        text = client.get("/metrics", headers={"Authorization": "Bearer t"}).text
    return {
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in SUFFIXES.get(family.type, ("",))
    }


def test_every_metric_the_dashboard_queries_is_served() -> None:
    queried = {name for expr in _exprs() for name in re.findall(r"\bcardroom_\w+", expr)}
    assert len(queried) >= 20
    assert queried - _served() == set()


def test_the_dashboard_covers_every_family_the_app_serves() -> None:
    """A metric added without a panel is a figure nobody looks at."""
    text = " ".join(_exprs())
    families = {re.sub(r"_(total|bucket|count|sum)$", "", n) for n in _served()}
    shown = {f for f in families if f.startswith("cardroom_") and not f.endswith("_created")}
    unshown = {f for f in shown if f not in text}
    assert unshown == set()


def test_prometheus_scrapes_every_replica_with_the_token() -> None:
    config = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    (job,) = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    assert job["authorization"] == {"type": "Bearer", "credentials_file": "/tmp/metrics_token"}
    (targets,) = job["static_configs"]
    spec = compose()
    assert sorted(targets["targets"]) == sorted(f"{name}:8000" for name in replicas(spec))
    prometheus = spec["services"]["prometheus"]
    assert "/tmp/metrics_token" in " ".join(prometheus["command"])
    assert "./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro" in prometheus["volumes"]
    for name, app in replicas(spec).items():
        assert app["environment"]["METRICS_TOKEN"] == "${METRICS_TOKEN:-}", name
        assert app["environment"]["METRICS"] == "${METRICS:-false}", name


def test_grafana_loads_the_dashboard_from_its_prometheus() -> None:
    spec = compose()
    for name in MONITORING:
        assert spec["services"][name]["profiles"] == ["monitoring"], name
    provisioning = ROOT / "deploy" / "grafana" / "provisioning"
    (source,) = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())[
        "datasources"
    ]
    assert source["url"] == "http://prometheus:9090"
    (provider,) = yaml.safe_load((provisioning / "dashboards" / "cardroom.yml").read_text())[
        "providers"
    ]
    mounts = spec["services"]["grafana"]["volumes"]
    assert f"./deploy/grafana/dashboards:{provider['options']['path']}:ro" in mounts
    uids = {
        t["datasource"]["uid"]
        for panel in json.loads(DASHBOARD.read_text())["panels"]
        for t in panel["targets"]
    }
    assert uids == {source["uid"]}
