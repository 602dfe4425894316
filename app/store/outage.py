"""One line in the log when a dependency goes away and one when it is back.

The socket caps (app/store/sockets.py) and the rate limits (app/api/doors.py)
both fail open when Redis is away, and each call that finds it away would
otherwise log: a minute's outage under a busy table is thousands of lines
that bury the two that matter, when it went and when it came back.
"""

from __future__ import annotations

import logging

from app.core import metrics


class Outage:
    """Tracks whether the last call to one dependency failed."""

    def __init__(self, log: logging.Logger, gone: str, back: str) -> None:
        #: `gone` is formatted with the first error of the outage (`%s`)
        self.log = log
        self.gone = gone
        self.back = back
        self.away = False

    def failed(self, err: BaseException) -> None:
        metrics.REDIS_ERRORS.inc()
        if not self.away:
            self.away = True
            self.log.warning(self.gone, err)

    def answered(self) -> None:
        if self.away:
            self.away = False
            self.log.warning(self.back)
