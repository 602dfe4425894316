"""Who is asking: the browser's guest identity and, when signed in, its account.

A guest cookie is a long random value in an HttpOnly cookie, issued on first
contact; it ties a browser to the games it played, so "my past games" works
without an account.  Signing in adds an account id (see app/api/accounts.py);
the guest's games move to the account when the guest signs up.

The cookie is a bearer secret, so it goes no further than this module: the
`guest_id` everything below sees - rooms, Redis streams, the database - is
its SHA-256 (`guest_key`).  A copy of the database or of Redis holds no value
that could be put in a browser to pass as someone.

A person's own move link moves the person, not only the place: the new
browser gets a fresh cookie that acts as the person's guest id, and the old
browser's cookie is revoked (app/db/models.py, `GuestAlias`), so the
person's history and records are found from the new browser only.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from fastapi import Request, Response

from app.core.config import get_settings

GUEST_COOKIE = "cardroom_guest"
SESSION_COOKIE = "cardroom_session"
_YEAR = 365 * 24 * 3600


@dataclass(frozen=True)
class Identity:
    #: the SHA-256 of the guest cookie, never the cookie itself
    guest_id: str
    account_id: int | None = None
    account_name: str | None = None


def new_secret() -> str:
    """A URL-safe secret with 256 bits of randomness (tokens, guest ids, sessions)."""
    return secrets.token_urlsafe(32)


async def identity(request: Request, response: Response) -> Identity:
    """FastAPI dependency: the caller's identity, issuing a guest cookie if needed."""
    guest = request.cookies.get(GUEST_COOKIE)
    guest_id = await _guest_of(request, guest) if guest and len(guest) <= 128 else None
    if guest_id is None:
        guest_id = guest_key(new_guest(response))
    account_id, account_name = await _account_of(request)
    return Identity(guest_id, account_id, account_name)


async def _guest_of(request: Request, cookie: str) -> str | None:
    """The guest id the cookie acts as: its hash, or the person a move link
    made it stand for; None if a move link revoked it (the browser is then
    given a fresh identity, as a new browser is).  Without a database there
    are no aliases."""
    key = guest_key(cookie)
    accounts = getattr(request.app.state, "accounts", None)
    return key if accounts is None else await accounts.guest_of(key)


def guest_key(cookie: str) -> str:
    """What identifies a guest browser everywhere past the HTTP boundary: the
    SHA-256 of its cookie (migrations/versions/0006_guest_hashes.py hashed the
    rows stored before, the same way)."""
    return hashlib.sha256(cookie.encode("utf-8", "surrogatepass")).hexdigest()


def new_guest(response: Response) -> str:
    """Issue this browser a fresh guest identity (first contact, signing out -
    so the next person at a shared computer does not inherit the last one's
    games - and a cookie a move link revoked); returns the cookie."""
    guest = new_secret()
    set_guest_cookie(response, guest)
    return guest


def set_guest_cookie(response: Response, cookie: str) -> None:
    _set(response, GUEST_COOKIE, cookie, 10 * _YEAR)


def set_session_cookie(response: Response, token: str, max_age: int) -> None:
    _set(response, SESSION_COOKIE, token, max_age)


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(
        SESSION_COOKIE, httponly=True, samesite="lax", secure=get_settings().secure_cookies
    )


def _set(response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=get_settings().secure_cookies,
    )


async def _account_of(request: Request) -> tuple[int | None, str | None]:
    """The signed-in account, if the session cookie names a live session.
    Looked up through `request.app.state.accounts` when the app has accounts."""
    token = request.cookies.get(SESSION_COOKIE)
    accounts = getattr(request.app.state, "accounts", None)
    if not token or accounts is None:
        return None, None
    found = await accounts.session_account(token)
    if found is None:
        return None, None
    account_id, name = found
    return int(account_id), str(name)
