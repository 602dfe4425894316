"""bench/load.py's set-up requests: a retry never makes a second room."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from bench.load import _post


class _Server:
    """An httpx client's `post` that fails as told, then answers `status`."""

    def __init__(self, *failures: Exception, status: int = 200) -> None:
        self.failures = list(failures)
        self.status = status
        self.posts = 0

    async def post(self, url: str, json: dict[str, Any]) -> httpx.Response:
        self.posts += 1
        if self.failures:
            raise self.failures.pop(0)
        request = httpx.Request("POST", url)
        return httpx.Response(self.status, json={"code": "ABCD"}, request=request)


def test_a_connection_closed_before_any_answer_is_tried_again(monkeypatch: Any) -> None:
    monkeypatch.setattr(asyncio, "sleep", _no_wait)
    server = _Server(httpx.RemoteProtocolError("closed"), httpx.ConnectError("refused"))
    assert asyncio.run(_post(server, "/api/rooms", {})) == {"code": "ABCD"}
    assert server.posts == 3


@pytest.mark.parametrize("failure", [httpx.ReadTimeout("slow"), httpx.ReadError("reset")])
def test_a_request_the_server_may_have_acted_on_is_not_sent_again(
    monkeypatch: Any, failure: Exception
) -> None:
    """A room made twice would shift every later room's deals (bench/guard.py)."""
    monkeypatch.setattr(asyncio, "sleep", _no_wait)
    server = _Server(failure)
    with pytest.raises(type(failure)):
        asyncio.run(_post(server, "/api/rooms", {}))
    assert server.posts == 1


def test_an_error_status_is_not_sent_again() -> None:
    server = _Server(status=503)
    with pytest.raises(httpx.HTTPStatusError):
        asyncio.run(_post(server, "/api/rooms", {}))
    assert server.posts == 1


async def _no_wait(seconds: float) -> None:
    return None
