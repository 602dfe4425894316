"""Suite-wide settings: hypothesis profiles (CI plays more games)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from tests.services import IN_CI

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("ci" if IN_CI else "default")
