"""Accounts over HTTP, on SQLite and PostgreSQL: sign up, sign in, a wrong
password refused with a clear message, sign out, and a guest's games moving to
the account."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI

from app.api import accounts as accounts_api
from app.api import history as history_api
from app.api.identity import GUEST_COOKIE, SESSION_COOKIE, guest_key
from app.core.config import Settings, get_settings
from app.db.records import DbRecords
from app.db.setup import attach, detach
from app.games import GAMES
from tests.db import backends
from tests.db.stored import stored
from tests.db.tinygame import TINY, play

backend_url = backends.backend_url
db_url = backends.db_url
pg_url = backends.pg_url
sqlite_template = backends.sqlite_template


@pytest.fixture
async def app(db_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FastAPI]:
    monkeypatch.setitem(GAMES, TINY.name, TINY)
    app = FastAPI()
    attach(app, db_url, hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    app.include_router(history_api.router)
    app.include_router(accounts_api.router)
    try:
        yield app
    finally:
        await detach(app)


def browser(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def cookie_headers(response: httpx.Response, name: str) -> list[str]:
    return [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{name}=")]


async def test_sign_up_signs_in_with_a_private_session_cookie(app: FastAPI) -> None:
    async with browser(app) as b:
        assert (await b.get("/api/me")).json() == {"signed_in": False, "account": None}
        made = await b.post("/api/accounts/signup", json={"name": "Ana", "password": "hunter22!"})
        assert made.status_code == 201, made.text
        assert made.json()["account"]["name"] == "Ana"
        [cookie] = cookie_headers(made, SESSION_COOKIE)
        assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
        assert "Secure" not in cookie  # secure_cookies is off by default (plain http on a LAN)
        me = (await b.get("/api/me")).json()
        assert me == {"signed_in": True, "account": made.json()["account"]}


async def test_the_session_cookie_is_secure_when_the_settings_say_so(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECURE_COOKIES", "true")
    get_settings.cache_clear()
    try:
        async with browser(app) as b:
            made = await b.post(
                "/api/accounts/signup", json={"name": "Bo", "password": "hunter22!"}
            )
        [cookie] = cookie_headers(made, SESSION_COOKIE)
        assert "Secure" in cookie
    finally:
        monkeypatch.delenv("SECURE_COOKIES")
        get_settings.cache_clear()


async def test_sign_in_elsewhere_and_a_wrong_password_is_refused_clearly(app: FastAPI) -> None:
    async with browser(app) as first, browser(app) as second:
        await first.post("/api/accounts/signup", json={"name": "Ana", "password": "hunter22!"})
        wrong = await second.post(
            "/api/accounts/signin", json={"name": "Ana", "password": "hunter23!"}
        )
        assert wrong.status_code == 401
        assert wrong.json()["detail"] == {
            "code": "bad_credentials",
            "message": "wrong name or password",
        }
        assert not cookie_headers(wrong, SESSION_COOKIE)
        assert (await second.get("/api/me")).json()["signed_in"] is False
        right = await second.post(
            "/api/accounts/signin", json={"name": "ana", "password": "hunter22!"}
        )
        assert right.status_code == 200 and right.json()["account"]["name"] == "Ana"
        assert (await second.get("/api/me")).json()["account"]["name"] == "Ana"


async def test_sign_ins_from_one_address_are_limited_before_any_hashing(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each try runs argon2 (64 MiB in production): past the limit even the
    right password is refused with 429 and Retry-After, and argon2 never runs."""
    app.state.settings = Settings(signins_per_minute=3)
    async with browser(app) as b:
        body = {"name": "Ana", "password": "hunter22!"}
        assert (await b.post("/api/accounts/signup", json=body)).status_code == 201
        wrong = {"name": "Ana", "password": "hunter23!"}
        assert (await b.post("/api/accounts/signin", json=wrong)).status_code == 401
        assert (await b.post("/api/accounts/signin", json=body)).status_code == 200
        hashed: list[str] = []
        monkeypatch.setattr(PasswordHasher, "verify", lambda *a: hashed.append("x") or True)
        for attempt in (body, {"name": "Bo", "password": "new account"}):
            path = "/api/accounts/signin" if attempt is body else "/api/accounts/signup"
            refused = await b.post(path, json=attempt)
            assert refused.status_code == 429, refused.text
            assert refused.json()["detail"]["code"] == "rate_limited"
            assert "at most 3 per minute" in refused.json()["detail"]["message"]
            assert 1 <= int(refused.headers["Retry-After"]) <= 60
            assert not cookie_headers(refused, SESSION_COOKIE)
        assert hashed == []


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"name": "Ana", "password": "other pass"}, 409, "name_taken"),
        ({"name": "", "password": "long enough"}, 400, "bad_name"),
        ({"name": "Cy", "password": "short"}, 400, "bad_password"),
        ({"name": "Cy"}, 400, "bad_password"),
        ({"password": "long enough"}, 400, "bad_name"),
    ],
)
async def test_a_refused_sign_up_says_why_and_signs_nobody_in(
    app: FastAPI, body: dict[str, str], status: int, code: str
) -> None:
    async with browser(app) as b:
        await b.post("/api/accounts/signup", json={"name": "Ana", "password": "hunter22!"})
    async with browser(app) as b:
        got = await b.post("/api/accounts/signup", json=body)
        assert got.status_code == status and got.json()["detail"]["code"] == code
        assert got.json()["detail"]["message"]
        assert (await b.get("/api/me")).json()["signed_in"] is False


async def test_sign_out_ends_the_session_and_the_browser_becomes_a_new_guest(app: FastAPI) -> None:
    async with browser(app) as b:
        await b.get("/api/me")
        guest = b.cookies[GUEST_COOKIE]
        await b.post("/api/accounts/signup", json={"name": "Ana", "password": "hunter22!"})
        token = b.cookies[SESSION_COOKIE]
        out = await b.post("/api/accounts/signout")
        assert out.status_code == 200
        assert b.cookies.get(GUEST_COOKIE) not in (None, guest)
        assert SESSION_COOKIE not in b.cookies
        assert (await b.get("/api/me")).json()["signed_in"] is False
        b.cookies.set(SESSION_COOKIE, token)  # an old cookie kept somewhere no longer works
        assert (await b.get("/api/me")).json()["signed_in"] is False


async def test_a_guests_games_move_to_the_account_and_follow_it_to_other_browsers(
    app: FastAPI,
) -> None:
    records = app.state.records
    assert isinstance(records, DbRecords)
    async with browser(app) as laptop, browser(app) as phone:
        await laptop.get("/api/me")
        guest = guest_key(laptop.cookies[GUEST_COOKIE])  # as stored: the cookie's hash
        gid = await stored(records, play(TINY, 2, {}, seed=2), "ROOM01", [guest, None])
        assert (await phone.get("/api/me/games")).json()["games"] == []
        made = await laptop.post(
            "/api/accounts/signup", json={"name": "Ana", "password": "hunter22!"}
        )
        assert made.json()["moved_seats"] == 1
        await phone.post("/api/accounts/signin", json={"name": "Ana", "password": "hunter22!"})
        games = (await phone.get("/api/me/games")).json()["games"]
        assert [g["id"] for g in games] == [gid] and games[0]["my_seats"] == [0]
        replay = await phone.get(f"/api/history/games/{gid}/replay")
        assert replay.status_code == 200 and replay.json()["perspective"] == "full"
        # played on the laptop while signed in, saved by a room that passed no account id
        later = await stored(records, play(TINY, 2, {}, seed=3), "ROOM02", [None, guest])
        games = (await phone.get("/api/me/games")).json()["games"]
        assert [g["id"] for g in games] == [later, gid]
        assert games[0]["my_seats"] == [1]
