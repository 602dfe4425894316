"""Suite-wide settings: hypothesis profiles.

Locally every run explores new random games (that is how a wrong error code
in Possession turned up); in CI (`CI=true`) the examples are fixed, so a red
check always means the change, never the luck of the draw."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.seeds import TEST_SEED
from tests.services import IN_CI

# every server a test starts deals from this (app/core/config.py `deal_seed`),
# uvicorn processes included: they inherit the environment
os.environ.setdefault("DEAL_SEED", str(TEST_SEED))

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
    derandomize=True,
)
settings.load_profile("ci" if IN_CI else "default")


def pytest_report_header() -> str:
    return f"games dealt from TEST_SEED={TEST_SEED} (set it to deal others; DEAL_SEED for servers)"


def pytest_collection_modifyitems(config: object, items: list[pytest.Item]) -> None:
    """Browser tests run last: Playwright's sync API keeps an asyncio loop running
    in the main thread while a browser lives, and an asyncio test run then
    would find a loop already running.  The browser closes at the end of its
    module (tests/browser/conftest.py), so this order is a second fence: a
    test is a browser test if it is marked so or uses the browser at all (a
    module that forgot its mark ran in the middle once, when the browser was
    session-wide, and every database test after it failed)."""

    def in_browser(item: pytest.Item) -> bool:
        return item.get_closest_marker("browser") is not None or "browser" in getattr(
            item, "fixturenames", ()
        )

    items.sort(key=in_browser)


@pytest.fixture
def no_link_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seat links at once after the grace: in-process tests with a short grace
    would otherwise wait out the 10 s floor (app/rooms/membership.py,
    SEAT_LINK_FLOOR; tests/rooms/test_presence.py tests the floor itself)."""
    import app.rooms.commands

    monkeypatch.setattr(app.rooms.commands, "SEAT_LINK_FLOOR", 0.0)
