"""Suite-wide settings: hypothesis profiles.

Locally every run explores new random games (that is how a wrong error code
in Possession turned up); in CI (`CI=true`) the examples are fixed, so a red
check always means the change, never the luck of the draw."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from tests.services import IN_CI

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


def pytest_collection_modifyitems(config: object, items: list[pytest.Item]) -> None:
    """Browser tests run last: Playwright's sync API keeps an asyncio loop running
    in the main thread while its session-wide browser lives, and every asyncio
    test after it would find a loop already running."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
