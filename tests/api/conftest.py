"""An app per test over MemoryRecords, with the tiny test game registered."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.games import GAMES
from app.main import create_app
from app.store.records import MemoryRecords
from tests.rooms.tinygame import TINY


@pytest.fixture
def tiny() -> Iterator[None]:
    GAMES["tiny"] = TINY
    yield
    GAMES.pop("tiny", None)


@pytest.fixture
def records() -> MemoryRecords:
    return MemoryRecords()


#: every test client comes from one address and opens rooms, joins and sockets
#: far faster than people do: the per-address limits are lifted, except in
#: the tests of those limits (tests/api/test_doors.py)
OPEN_DOORS = {
    "rooms_per_hour": 100_000,
    "joins_per_minute": 100_000,
    "signins_per_minute": 100_000,
    "lookups_per_minute": 100_000,
    "replays_per_minute": 100_000,
    "max_sockets_per_address": 10_000,
}


@pytest.fixture
def app_settings() -> Settings:
    return Settings(max_frame_bytes=4096, max_messages_per_second=50, **OPEN_DOORS)


@pytest.fixture
def client(tiny: None, records: MemoryRecords, app_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(app_settings, records)) as c:
        yield c
