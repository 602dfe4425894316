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


#: served over HTTPS only (the secure_cookies setting): browsers that saw it
#: once refuse plain http for a year, so nobody on the way can strip TLS and
#: read a seat token or a cookie
HSTS = "max-age=31536000"


class SecurityHeaders:
    """ASGI middleware: adds HEADERS to each HTTP response that lacks them
    (and HSTS when `hsts`, i.e. when the server is reached over HTTPS)."""

    def __init__(self, app: ASGIApp, hsts: bool = False) -> None:
        self.app = app
        self.headers = {**HEADERS, "Strict-Transport-Security": HSTS} if hsts else HEADERS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    if name == "Content-Security-Policy" and scope["path"] in EXEMPT:
                        continue
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
