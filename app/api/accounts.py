"""Optional accounts: sign up, sign in, sign out, and who am I.

Nobody needs an account to play; it only keeps a person's past games together
across browsers.  Signing up or in from a browser moves that browser's guest
games to the account.  Signing out forgets the session and gives the browser a
fresh guest identity, so whoever uses it next does not see those games; a
guest who was not signed in keeps theirs.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from pydantic import BaseModel

from app.api.doors import SIGNINS, limited
from app.api.identity import (
    SESSION_COOKIE,
    Identity,
    clear_session_cookie,
    identity,
    new_guest,
    set_session_cookie,
)
from app.db.accounts import SESSION_DAYS, AccountError, Accounts, SignedIn

router = APIRouter(tags=["accounts"])

Me = Annotated[Identity, Depends(identity)]

_STATUS = {"name_taken": 409, "bad_credentials": 401}


class Credentials(BaseModel):
    """Checked by app/db/accounts.py, which says exactly what is wrong."""

    name: Any = None
    password: Any = None


def _accounts(request: Request) -> Accounts:
    found = getattr(request.app.state, "accounts", None)
    if found is None:
        raise HTTPException(
            503, detail={"code": "no_accounts", "message": "this server has no accounts"}
        )
    return found  # type: ignore[no-any-return]


def _signed_in(response: Response, done: SignedIn) -> dict[str, Any]:
    set_session_cookie(response, done.session_token, SESSION_DAYS * 24 * 3600)
    return {
        "account": {"id": done.account_id, "name": done.name},
        "moved_seats": done.moved_players,
    }


def _refused(err: AccountError) -> HTTPException:
    return HTTPException(
        _STATUS.get(err.code, 400), detail={"code": err.code, "message": err.message}
    )


@router.post("/api/accounts/signup", status_code=201, dependencies=[limited(SIGNINS)])
async def sign_up(
    body: Credentials, request: Request, response: Response, me: Me
) -> dict[str, Any]:
    accounts = _accounts(request)
    try:
        done = await accounts.sign_up(body.name, body.password, me.guest_id)
    except AccountError as err:
        raise _refused(err) from None
    await accounts.sign_out(request.cookies.get(SESSION_COOKIE))  # replace any older session
    return _signed_in(response, done)


@router.post("/api/accounts/signin", dependencies=[limited(SIGNINS)])
async def sign_in(
    body: Credentials, request: Request, response: Response, me: Me
) -> dict[str, Any]:
    accounts = _accounts(request)
    try:
        done = await accounts.sign_in(body.name, body.password, me.guest_id)
    except AccountError as err:
        raise _refused(err) from None
    await accounts.sign_out(request.cookies.get(SESSION_COOKIE))
    return _signed_in(response, done)


@router.post("/api/accounts/signout")
async def sign_out(request: Request, response: Response, me: Me) -> dict[str, Any]:
    """Only a signed-in browser becomes a new guest: a guest who signs out (or
    is made to) keeps their identity, and with it their games, so the request
    can never cost anyone their history."""
    token = request.cookies.get(SESSION_COOKIE)
    await _accounts(request).sign_out(token)
    if token is not None:
        clear_session_cookie(response)
    if me.account_id is not None:
        new_guest(response)
    return {"signed_in": False}


@router.get("/api/me")
async def whoami(me: Me) -> dict[str, Any]:
    account = None if me.account_id is None else {"id": me.account_id, "name": me.account_name}
    return {"signed_in": account is not None, "account": account}
