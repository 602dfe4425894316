"""One warning when a dependency goes away and one when it is back
(app/store/outage.py), however many calls find it away."""

from __future__ import annotations

import logging

import pytest

from app.store.outage import Outage

log = logging.getLogger("tests.outage")


def test_an_outage_is_told_once_going_and_once_back_each_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outage = Outage(log, "away: %s", "back")
    with caplog.at_level(logging.WARNING, logger="tests.outage"):
        outage.answered()  # answering while never away says nothing
        for n in range(50):
            outage.failed(ConnectionError(f"try {n}"))
        assert outage.away
        for _ in range(50):
            outage.answered()
        outage.failed(ConnectionError("again"))
        outage.answered()
    assert [r.getMessage() for r in caplog.records] == [
        "away: try 0",
        "back",
        "away: again",
        "back",
    ]
    assert not outage.away
