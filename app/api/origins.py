"""No writes from other sites: every state-changing request, and every
WebSocket, must come from the card room's own pages.

A browser attaches the card room's cookies to a request another site's page
makes (a form that posts here, a `fetch`, a socket), so without this check any
page a player visits could sign them out, join rooms in their name or play
from their seat.  Browsers say where a request comes from, and a page cannot
forge it:

- `Sec-Fetch-Site` (every current browser): `cross-site` or `same-site` is
  refused; `same-origin` and `none` (the user's own typing) pass;
- `Origin`: when present, it must be the card room's own origin, which is
  either PUBLIC_URL's or the one the request itself was addressed to (its
  scheme, as uvicorn reads it - behind a proxy, from X-Forwarded-Proto - and
  its Host header).  An opaque origin (`null`: a sandboxed frame, a
  `data:` page) is refused.

A request with neither header is not a browser's cross-site request (a
browser sends Origin on every cross-site POST and on every socket), so
scripts, the test suite's clients and the command line pass.  Reads (GET,
HEAD, OPTIONS) change nothing and are left alone.

A refused request gets 403 `{"detail": {"code": "cross_site", ...}}`; a
refused socket is closed before it is accepted, which uvicorn answers as a
403 on the handshake (the page sees the socket fail to open).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import orjson
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

#: the methods that may change something (every route that writes is one of these)
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: `Sec-Fetch-Site` values of a request another site's page made
FOREIGN_SITES = frozenset({"cross-site", "same-site"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCHEMES = {"ws": "http", "wss": "https"}

REFUSED = {
    "code": "cross_site",
    "message": "this request came from another site's page: the card room takes "
    "changes only from its own pages",
}


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]`, lower-cased and without a default port, or
    None for anything that is not an http(s) origin."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def own_origin(scope: Scope, headers: Headers) -> str | None:
    """The origin the request was addressed to: its scheme and Host header."""
    host = headers.get("host")
    if not host:
        return None
    scheme = _SCHEMES.get(scope.get("scheme", "http"), scope.get("scheme", "http"))
    return origin_of(f"{scheme}://{host}")


def foreign(scope: Scope, public_origin: str | None) -> bool:
    """Whether a request (or socket) comes from another site's page."""
    headers = Headers(scope=scope)
    if headers.get("sec-fetch-site", "").lower() in FOREIGN_SITES:
        return True
    sent = headers.get("origin")
    if sent is None:
        return False
    origin = origin_of(sent)
    return origin is None or origin not in (public_origin, own_origin(scope, headers))


class SameOrigin:
    """ASGI middleware: refuses writes and sockets from other sites (see the
    module)."""

    def __init__(self, app: ASGIApp, public_url: str = "") -> None:
        self.app = app
        self.public_origin = origin_of(public_url) if public_url else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        checked = kind == "websocket" or (kind == "http" and scope["method"] in WRITES)
        if not checked or not foreign(scope, self.public_origin):
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            # closing before accepting: uvicorn answers the handshake with a 403
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008, "reason": "cross_site"})
            return
        body = orjson.dumps({"detail": REFUSED})
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
