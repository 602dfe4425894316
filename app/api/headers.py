"""Security headers on every HTTP response, the static client's included.

The client is plain modules from this origin with no inline script or style
attribute, so the policy can forbid everything else: scripts, styles and
sockets only from here, images from here or `data:` (the page icon), and no
framing at all (clickjacking a card table would let another site click for
a player).  No referrer either: a room's address holds its code.

/docs (served only when the api_docs setting is on, for development) is the
one page without the policy: its explorer is inline script from a CDN.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}

#: the API explorer's pages (see the module's docstring)
EXEMPT = frozenset({"/docs", "/docs/oauth2-redirect"})


class SecurityHeaders:
    """ASGI middleware: adds HEADERS to each HTTP response that lacks them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    if name == "Content-Security-Policy" and scope["path"] in EXEMPT:
                        continue
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
