"""schemathesis over every HTTP route in the app's OpenAPI schema: whatever a
request holds, the server answers without a server error (a refusal is a
4xx that says why).

The schema is taken from the app itself: /openapi.json is not served unless
the api_docs setting is on."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from app.core.config import Settings
from app.main import create_app
from tests.api.conftest import OPEN_DOORS
from tests.db.backends import migrate

DATA = Path(tempfile.mkdtemp(prefix="cardroom-schema-"))
asyncio.run(migrate(f"sqlite+aiosqlite:///{DATA / 'cardroom.db'}"))
#: over a migrated SQLite file, so history and accounts answer for real
APP = create_app(Settings(data_dir=DATA, **OPEN_DOORS))
schema = schemathesis.openapi.from_dict(APP.openapi())


def test_the_schema_covers_every_http_route() -> None:
    paths = set(APP.openapi()["paths"])
    assert {"/api/rooms", "/api/rooms/{code}/join", "/api/rooms/{code}", "/api/games"} <= paths
    assert {"/api/accounts/signin", "/api/history/games/{game_id}/replay", "/api/me"} <= paths


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_route_fails_on_any_input(case: Any) -> None:
    response = case.call(app=APP)
    case.validate_response(response, checks=[not_a_server_error])
    assert response.status_code < 500
