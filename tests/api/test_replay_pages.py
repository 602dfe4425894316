"""HTTP hardening: a finished game's replay pages are computed once and kept
(a finished game never changes), replays are limited per address, and HSTS
is sent when the server is reached over HTTPS (secure_cookies)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api import history as history_api
from app.core.config import Settings
from app.main import create_app
from app.store.records import MemoryRecords
from tests.api.test_history import (  # noqa: F401 - fixtures
    Browser,
    _registered,
    app,
    browsers,
    records_of,
)
from tests.db import backends
from tests.db.stored import stored
from tests.db.tinygame import TINY, play

backend_url = backends.backend_url
db_url = backends.db_url
pg_url = backends.pg_url
sqlite_template = backends.sqlite_template


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the games the replay route rebuilds."""
    calls: list[int] = []
    real = history_api.replay

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(history_api, "replay", counted)
    return calls


async def test_a_finished_games_pages_are_rebuilt_once(
    app: FastAPI,  # noqa: F811
    browsers: list[Browser],  # noqa: F811
    replays: list[int],
) -> None:
    me, other = browsers[0], browsers[1]
    played = play(TINY, 2, {}, seed=5)
    gid = await stored(records_of(app), played, "ROOM01", [await me.guest(), await other.guest()])
    first = await me.get(f"/api/history/games/{gid}/replay")
    again = await other.get(f"/api/history/games/{gid}/replay")
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json() and first.json()["status"] == "finished"
    assert len(replays) == 1, "both players see it whole: one page, rebuilt once"
    await me.get(f"/api/history/games/{gid}/replay", start=1)
    assert len(replays) == 2, "another page is another entry"


async def test_a_running_games_pages_are_not_kept(
    app: FastAPI,  # noqa: F811
    browsers: list[Browser],  # noqa: F811
    replays: list[int],
) -> None:
    me = browsers[0]
    played = play(TINY, 2, {}, seed=4, max_actions=3)
    gid = await stored(records_of(app), played, "ROOM01", [await me.guest(), None])
    for _ in range(2):
        got = await me.get(f"/api/history/games/{gid}/replay")
        assert got.json()["status"] == "running"
    assert len(replays) == 2


async def test_replays_are_limited_per_address(
    app: FastAPI,  # noqa: F811
    browsers: list[Browser],  # noqa: F811
) -> None:
    app.state.settings = Settings(replays_per_minute=2)
    me = browsers[0]
    played = play(TINY, 2, {}, seed=5)
    gid = await stored(records_of(app), played, "ROOM01", [await me.guest(), None])
    codes = [(await me.get(f"/api/history/games/{gid}/replay")).status_code for _ in range(3)]
    assert codes == [200, 200, 429]


def test_the_page_cache_is_bounded_by_bytes() -> None:
    pages = history_api.ReplayPages(max_bytes=100)
    for i in range(10):
        pages.put(i, b"x" * 30)
    assert pages.held <= 100 and list(pages.pages) == [7, 8, 9]
    pages.get(7)
    pages.put(10, b"y" * 30)
    assert list(pages.pages) == [9, 7, 10], "the least recently used goes first"


@pytest.mark.parametrize("secure", [False, True])
def test_hsts_only_when_served_over_https(secure: bool) -> None:
    with TestClient(create_app(Settings(secure_cookies=secure), MemoryRecords())) as c:
        sent = c.get("/api/health").headers.get("strict-transport-security")
    assert sent == ("max-age=31536000" if secure else None)
