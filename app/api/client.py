"""Serving the browser client so that no tab runs a client older than its server.

The client is plain files with no build step, so "the build" is the static
tree itself: its id is a hash of every file's path and bytes, taken once when
the app is made.  The page (`index.html`, also served for invite links) names
its stylesheets and entry module under `/b/<id>/...`; the modules import one
another by relative paths, so every file a page loads carries the id it was
made with.  Those addresses never change their bytes, so browsers may keep
them for a year without asking (`immutable`); the page itself and the plain
paths (`/js/...`, `/css/...`) are revalidated on every load (`no-cache`).

A stamped address with another id than this server's (an old tab, or a
process of a rolling upgrade that serves another tree) still gets the file
this server has, but `no-store`: it must never be cached under an id that
names other bytes.  Every HTTP answer says which build the server runs
(`X-Build`), and so does the room socket's first message (docs/protocol.md):
a tab that sees another id reloads itself when nothing is in the middle
(static/js/build.js).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: stamped files: the same address always holds the same bytes
IMMUTABLE = "public, max-age=31536000, immutable"
#: the page and unstamped files: kept, but asked about again before each use
REVALIDATE = "no-cache"
#: a stamped address naming another build than this server's
NOT_OURS = "no-store"
#: the header that tells every HTTP client which build this server runs
BUILD_HEADER = "X-Build"


def build_id(root: Path) -> str:
    """12 hex digits of a SHA-256 over every file under `root`, by path and
    bytes: any change to any file gives another id."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


def stamped_index(html: str, build: str) -> str:
    """The page with its own stylesheets and entry module under /b/<build>/."""
    return html.replace('href="/css/', f'href="/b/{build}/css/').replace(
        'src="/js/', f'src="/b/{build}/js/'
    )


class ClientFiles(StaticFiles):
    """The static tree at its plain paths, revalidated on each use."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.setdefault("Cache-Control", REVALIDATE)
        return response


class BuildHeader:
    """ASGI middleware: `X-Build: <id>` on every HTTP answer."""

    def __init__(self, app: ASGIApp, build: str) -> None:
        self.app = app
        self.build = build

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_build(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[BUILD_HEADER] = self.build
            await send(message)

        await self.app(scope, receive, send_with_build)


def serve_client(app: FastAPI, root: Path, build: str) -> None:
    """Serve the client in `root`, whose `build_id` is `build`, on `app`: the
    page at `/` and `/r/{code}`, stamped files under `/b/<build>/`, plain ones
    at their paths.  Call after every other route: the plain files are mounted
    at `/`."""
    index_file = root / "index.html"
    page = stamped_index(index_file.read_text(), build) if index_file.is_file() else None
    files = ClientFiles(directory=root, html=True)

    def index() -> HTMLResponse:
        if page is None:
            raise HTTPException(404, detail={"code": "no_client", "message": "no client"})
        return HTMLResponse(page, headers={"Cache-Control": REVALIDATE})

    app.add_api_route("/", index, methods=["GET"], include_in_schema=False)
    app.add_api_route("/index.html", index, methods=["GET"], include_in_schema=False)

    @app.get("/r/{code}", include_in_schema=False)
    async def invite(code: str) -> HTMLResponse:
        return index()

    @app.get("/b/{stamp}/{path:path}", include_in_schema=False)
    async def stamped(stamp: str, path: str, request: Request) -> Response:
        response = await files.get_response(path, request.scope)
        response.headers["Cache-Control"] = IMMUTABLE if stamp == build else NOT_OURS
        return response

    app.mount("/", files, name="static")
