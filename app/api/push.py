"""Turn nudges over Web Push: the server's public key, and each person's
subscriptions (app/rooms/webpush.py sends; app/db/push.py keeps).

- GET /api/push: the VAPID public key a browser subscribes with.
- PUT /api/me/push: keep this browser's subscription for the asker (the
  browser's guest identity, and the account signed in); 409 `endpoint_taken`
  for an endpoint another person holds (it never changes owner by a PUT:
  app/db/push.py, `subscribe`).  Only endpoints of
  the push services `PUSH_SERVICES` names are taken: the server will POST to
  this address, so it must not be a way to make it call anything else.
- DELETE /api/me/push: forget it (only the asker's own).

All three answer 503 on a server without a database (no push there).  A
subscription is a row written: PUT and DELETE count against the address's
lookups (docs/security.md), and a browser keeps at most five.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.api.deps import get_app_settings
from app.api.doors import LOOKUPS, limited
from app.api.history import Me, fail
from app.core.config import Settings
from app.db.push import PushStore

router = APIRouter(tags=["push"])

B64URL = r"^[A-Za-z0-9_-]+={0,2}$"


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""


class SubscriptionKeys(BaseModel):
    #: the browser's P-256 public key: 65 bytes, base64url
    p256dh: str = Field(pattern=B64URL, max_length=100)
    #: the browser's 16-byte auth secret, base64url
    auth: str = Field(pattern=B64URL, max_length=30)

    @field_validator("p256dh")
    @classmethod
    def _a_point(cls, v: str) -> str:
        raw = _unb64(v)
        if len(raw) != 65 or raw[0] != 4:
            raise ValueError("p256dh must be an uncompressed P-256 point (65 bytes)")
        return v

    @field_validator("auth")
    @classmethod
    def _sixteen(cls, v: str) -> str:
        if len(_unb64(v)) != 16:
            raise ValueError("auth must be 16 bytes")
        return v


class SubscriptionIn(BaseModel):
    """What `PushSubscription.toJSON()` gives in the browser."""

    model_config = ConfigDict(extra="ignore")  # expirationTime and what may come

    endpoint: str = Field(max_length=1024)
    keys: SubscriptionKeys


class Unsubscribe(BaseModel):
    endpoint: str = Field(max_length=1024)


def _store(request: Request) -> PushStore:
    store = getattr(request.app.state, "push", None)
    if not isinstance(store, PushStore):
        raise fail(503, "no_push", "this server sends no notifications (no database)")
    return store


Store = Annotated[PushStore, Depends(_store)]
AppSettings = Annotated[Settings, Depends(get_app_settings)]


def check_endpoint(endpoint: str, settings: Settings) -> None:
    """An endpoint of a known push service, over HTTPS (see the module)."""
    url = urlsplit(endpoint)
    schemes = ("https", "http") if settings.push_plain_http else ("https",)
    host = (url.hostname or "").lower()
    services = [s.strip().lower() for s in settings.push_services.split(",") if s.strip()]
    known = any(host == s or host.endswith("." + s) for s in services)
    if url.scheme not in schemes or not known or url.username or url.password:
        raise fail(
            422,
            "bad_endpoint",
            "that is not the address of a push service this server sends to "
            f"(https, one of: {', '.join(services)})",
        )


@router.get("/api/push")
async def push_key(request: Request, store: Store) -> dict[str, Any]:
    """The server's VAPID public key (`applicationServerKey`)."""
    return {"public_key": request.app.state.push_public_key}


@router.put("/api/me/push", dependencies=[limited(LOOKUPS)])
async def subscribe(
    body: SubscriptionIn, me: Me, store: Store, settings: AppSettings
) -> dict[str, Any]:
    """Nudge this browser when it is the asker's turn and they are away."""
    check_endpoint(body.endpoint, settings)
    kept = await store.subscribe(
        me.guest_id, me.account_id, body.endpoint, body.keys.p256dh, body.keys.auth
    )
    if not kept:
        raise fail(
            409,
            "endpoint_taken",
            "that subscription is someone else's: subscribe this browser anew at its "
            "push service for a subscription of your own",
        )
    return {"ok": True}


@router.delete("/api/me/push", dependencies=[limited(LOOKUPS)])
async def unsubscribe(body: Unsubscribe, me: Me, store: Store) -> dict[str, Any]:
    """No more nudges on this browser; `removed` is false when the asker had
    no such subscription (nothing of anyone else's is touched)."""
    removed = await store.unsubscribe(me.guest_id, me.account_id, body.endpoint)
    return {"removed": removed}
