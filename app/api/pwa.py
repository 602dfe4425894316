"""The two files that make the card room installable on a phone: the web app
manifest and the service worker (static/manifest.webmanifest, static/sw.js).

They are served by explicit routes rather than the static mount: each needs
its own content type (a manifest is `application/manifest+json`, which
Python's mimetypes does not know), the worker must sit at the root so that its
scope is the whole site, and it is revalidated on every load (`no-cache`) so a
new worker reaches every browser at once.  The worker caches nothing
(static/sw.js), so whatever the static mount says about caching holds.
Both come from the folder the app serves its client from (`STATIC_DIR`,
kept in `app.state.static_dir`), so a server pointed at another client
serves that client's worker too.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse

router = APIRouter()


def _file(request: Request, name: str, media_type: str, headers: dict[str, str]) -> FileResponse:
    folder: Path = request.app.state.static_dir
    path = folder / name
    if not path.is_file():
        raise HTTPException(404, detail={"code": "no_client", "message": "no client"})
    return FileResponse(path, media_type=media_type, headers=headers)


@router.get("/manifest.webmanifest", include_in_schema=False)
async def manifest(request: Request) -> FileResponse:
    return _file(
        request, "manifest.webmanifest", "application/manifest+json", {"Cache-Control": "no-cache"}
    )


@router.get("/sw.js", include_in_schema=False)
async def service_worker(request: Request) -> FileResponse:
    return _file(
        request,
        "sw.js",
        "text/javascript; charset=utf-8",
        {"Cache-Control": "no-cache", "Service-Worker-Allowed": "/"},
    )
