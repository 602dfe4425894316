"""The two files that make the card room installable on a phone: the web app
manifest and the service worker (static/manifest.webmanifest, static/sw.js).

They are served by explicit routes rather than the static mount: each needs
its own content type (a manifest is `application/manifest+json`, which
Python's mimetypes does not know), the worker must sit at the root so that its
scope is the whole site, and it is revalidated on every load (`no-cache`) so a
new worker reaches every browser at once.  The worker caches nothing
(static/sw.js), so whatever the static mount says about caching holds.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

STATIC_DIR = Path(__file__).resolve().parents[2] / "static"

router = APIRouter()


def _file(name: str, media_type: str, headers: dict[str, str]) -> FileResponse:
    path = STATIC_DIR / name
    if not path.is_file():
        raise HTTPException(404, detail={"code": "no_client", "message": "no client"})
    return FileResponse(path, media_type=media_type, headers=headers)


@router.get("/manifest.webmanifest", include_in_schema=False)
async def manifest() -> FileResponse:
    return _file("manifest.webmanifest", "application/manifest+json", {"Cache-Control": "no-cache"})


@router.get("/sw.js", include_in_schema=False)
async def service_worker() -> FileResponse:
    return _file(
        "sw.js",
        "text/javascript; charset=utf-8",
        {"Cache-Control": "no-cache", "Service-Worker-Allowed": "/"},
    )
