"""The history API over HTTP, on SQLite and PostgreSQL: my games, a game's facts,
a Posso score sheet, and replays that show each asker exactly their share."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI

from app.api import accounts as accounts_api
from app.api import history as history_api
from app.api.identity import GUEST_COOKIE, guest_key
from app.db.records import DbRecords
from app.db.replay import chapters
from app.db.setup import attach, detach
from app.games import GAMES
from app.games.base import Game
from app.games.cards import standard_deck
from app.store.records import PlayerRecord, RoomRecord, new_game_ref
from tests.db import backends
from tests.db.stored import store, stored
from tests.db.tinygame import TINY, engines_on_disk, play

backend_url = backends.backend_url
db_url = backends.db_url
pg_url = backends.pg_url
sqlite_template = backends.sqlite_template

ENGINES = engines_on_disk()
POSSO = next((e for e, _, _ in ENGINES if e.name == "posso"), None)


@pytest.fixture(autouse=True)
def _registered(monkeypatch: pytest.MonkeyPatch) -> None:
    for engine, _, _ in ENGINES:
        monkeypatch.setitem(GAMES, engine.name, engine)


@pytest.fixture
async def app(db_url: str) -> AsyncIterator[FastAPI]:
    app = FastAPI()
    attach(app, db_url, hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    app.include_router(history_api.router)
    app.include_router(accounts_api.router)
    try:
        yield app
    finally:
        await detach(app)


class Browser:
    """An HTTP client with its own cookie jar, i.e. one person's browser."""

    def __init__(self, app: FastAPI) -> None:
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://test"
        )

    async def guest(self) -> str:
        """This browser's guest id as stored: the hash of its cookie."""
        if GUEST_COOKIE not in self.http.cookies:
            (await self.http.get("/api/me")).raise_for_status()
        return guest_key(self.http.cookies[GUEST_COOKIE])

    async def get(self, path: str, **params: Any) -> httpx.Response:
        return await self.http.get(path, params=params)


@pytest.fixture
async def browsers(app: FastAPI) -> AsyncIterator[list[Browser]]:
    made = [Browser(app) for _ in range(4)]
    try:
        yield made
    finally:
        for b in made:
            await b.http.aclose()


def records_of(app: FastAPI) -> DbRecords:
    rec = app.state.records
    assert isinstance(rec, DbRecords)
    return rec


def _ids(case: tuple[Game[Any], int, dict[str, Any]]) -> str:
    return case[0].name


@pytest.mark.parametrize("case", ENGINES, ids=_ids)
async def test_a_finished_replay_matches_the_game_view_for_view(
    app: FastAPI, browsers: list[Browser], case: tuple[Game[Any], int, dict[str, Any]]
) -> None:
    engine, seats, options = case
    played = play(engine, seats, options, seed=21)
    assert played.result is not None
    me = browsers[0]
    gid = await stored(records_of(app), played, "ROOM01", [await me.guest()] + [None] * (seats - 1))
    steps: list[dict[str, Any]] = []
    while True:  # a page at a time, as a client does for a long game
        got = await me.get(f"/api/history/games/{gid}/replay", start=len(steps), limit=200)
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["perspective"] == "full" and body["status"] == "finished"
        assert body["start"] == len(steps)
        # the first page says where each hand, trick or round begins; no other repeats it
        assert ("chapters" in body) == (body["start"] == 0)
        if body["start"] == 0:
            want_chapters = chapters(engine.name, options, 21, seats, played.actions)
            assert body["chapters"] == want_chapters and body["chapters"]["marks"][0]["step"] == 0
        steps += body["steps"]
        if len(steps) >= body["total_steps"]:
            break
    assert body["total_steps"] == len(steps) == len(played.actions) + 1
    for i, step in enumerate(steps):
        assert step["step"] == i
        want = {str(s): played.views[i][str(s)] for s in range(seats)}
        assert step["views"] == want, f"step {i} differs"
        if i:
            assert [step["seat"], step["action"]] == list(played.actions[i - 1])
    assert body["result"] == played.result


async def test_a_running_replay_shows_a_player_only_their_own_seat(
    app: FastAPI, browsers: list[Browser]
) -> None:
    played = play(TINY, 3, {}, seed=4, max_actions=4)
    me = browsers[1]
    guests = [None, await me.guest(), None]
    gid = await stored(records_of(app), played, "ROOM01", guests)
    body = (await me.get(f"/api/history/games/{gid}/replay")).json()
    assert body["perspective"] == "seats" and body["status"] == "running"
    assert len(body["steps"]) == 5
    for i, step in enumerate(body["steps"]):
        assert step["views"] == {"1": played.views[i]["1"]}
        hidden = set(played.views[i]["0"]["hand"]) | set(played.views[i]["2"]["hand"])
        text = json.dumps(step)
        assert not [c for c in hidden if f'"{c}"' in text], f"step {i} leaks a hidden card"


async def test_a_stranger_is_refused_another_players_unfinished_replay(
    app: FastAPI, browsers: list[Browser]
) -> None:
    played = play(TINY, 2, {}, seed=4, max_actions=2)
    player, stranger = browsers[0], browsers[1]
    gid = await stored(records_of(app), played, "ROOM01", [await player.guest(), None])
    refused = await stranger.get(f"/api/history/games/{gid}/replay")
    assert refused.status_code == 403
    assert refused.json()["detail"] == {
        "code": "replay_refused",
        "message": f"game {gid} is still being played: only its players can replay it "
        "until it is over, each from the seat they still hold",
    }
    assert "hand" not in refused.text


async def test_a_player_who_lost_their_seat_cannot_follow_it_but_may_replay_it_once_over(
    app: FastAPI, browsers: list[Browser]
) -> None:
    """Kicked (or gone) mid-game, a player's row becomes the bot's that plays
    on in their seat (as app/rooms/places.py saves it): the running game's
    replay is closed to them, while the others still see their own seats;
    once the game is over they may replay it as one of its players."""
    whole = play(TINY, 2, {}, seed=4)
    played = play(TINY, 2, {}, seed=4, max_actions=2)
    kicked, stayed = browsers[0], browsers[1]
    rec = records_of(app)
    guests = [await kicked.guest(), await stayed.guest()]
    ref = new_game_ref()  # the id pages show; gid, the records' own
    gid = await store(rec, played, "ROOM01", guests, finish=False, public_id=ref)
    before = await kicked.get(f"/api/history/games/{ref}/replay")
    assert before.status_code == 200 and before.json()["perspective"] == "seats"
    room = RoomRecord(
        "ROOM01",
        played.game,
        played.options,
        {},
        "p1",
        [
            PlayerRecord("p0", "Player 0", "", 0, is_bot=True, guest_id=guests[0]),
            PlayerRecord("p1", "Player 1", "hash1", 1, guest_id=guests[1]),
        ],
    )
    await rec.save_room(room)
    refused = await kicked.get(f"/api/history/games/{ref}/replay")
    assert refused.status_code == 403, refused.text
    assert refused.json()["detail"]["code"] == "replay_refused"
    assert "hand" not in refused.text
    still = (await stayed.get(f"/api/history/games/{ref}/replay")).json()
    assert still["perspective"] == "seats" and set(still["steps"][0]["views"]) == {"1"}
    for seq in range(len(played.actions), len(whole.actions)):
        await rec.append_action(gid, seq, *whole.actions[seq])
    assert whole.result is not None
    await rec.finish_game(gid, whole.result)
    after = (await kicked.get(f"/api/history/games/{ref}/replay")).json()
    assert after["perspective"] == "full" and after["status"] == "finished"


async def test_who_sees_how_much_of_a_finished_game(app: FastAPI, browsers: list[Browser]) -> None:
    played = play(TINY, 2, {}, seed=8)
    player, watcher, stranger, _ = browsers
    rec = records_of(app)
    private = await stored(
        rec, played, "ROOM01", [await player.guest(), None], spectators=[await watcher.guest()]
    )
    public = await stored(
        rec, played, "ROOM02", [await player.guest(), None], settings={"public_replays": True}
    )
    as_watcher = (await watcher.get(f"/api/history/games/{private}/replay")).json()
    assert as_watcher["perspective"] == "spectator"
    for i, step in enumerate(as_watcher["steps"]):
        assert step["views"] == {"spectator": played.views[i]["spectator"]}
        assert all(e["to"] is None for e in step["events"])
    refused = await stranger.get(f"/api/history/games/{private}/replay")
    assert refused.status_code == 403 and "public replays" in refused.json()["detail"]["message"]
    for path in ("", "/sheet"):
        assert (await stranger.get(f"/api/history/games/{private}{path}")).status_code == 403
    as_stranger = (await stranger.get(f"/api/history/games/{public}/replay")).json()
    assert as_stranger["perspective"] == "full"
    assert as_stranger["steps"][-1]["views"]["1"] == played.views[-1]["1"]


async def test_my_games_lists_this_browsers_games_newest_first(
    app: FastAPI, browsers: list[Browser]
) -> None:
    me, other = browsers[0], browsers[1]
    rec = records_of(app)
    done = play(TINY, 2, {}, seed=1)
    running = play(TINY, 2, {}, seed=2, max_actions=1)
    first = await stored(rec, done, "ROOM01", [await me.guest(), await other.guest()])
    theirs = await stored(rec, done, "ROOM02", [None, await other.guest()])
    second = await stored(rec, running, "ROOM03", [None, await me.guest()])
    page = (await me.get("/api/me/games")).json()
    assert [g["id"] for g in page["games"]] == [second, first]
    newest, oldest = page["games"]
    assert newest["status"] == "running" and newest["my_seats"] == [1] and newest["result"] is None
    assert oldest["status"] == "finished" and oldest["my_seats"] == [0]
    assert oldest["my_place"] == 1 + next(
        i
        for i, group in enumerate(done.result["places"])
        if 0 in group  # type: ignore[index]
    )
    assert [s["name"] for s in oldest["seats"]] == ["Player 0", "Player 1"]
    assert theirs not in [g["id"] for g in page["games"]]
    one = (await me.get("/api/me/games", limit=1)).json()
    assert [g["id"] for g in one["games"]] == [second] and one["next_before"] == second
    rest = (await me.get("/api/me/games", limit=1, before=second)).json()
    assert [g["id"] for g in rest["games"]] == [first]
    assert (await me.get("/api/me/games", limit=0)).status_code == 422


async def test_a_games_facts_show_its_result_and_players_but_not_its_seed(
    app: FastAPI, browsers: list[Browser]
) -> None:
    played = play(TINY, 3, {"bonus": 2}, seed=987654321)
    me = browsers[0]
    gid = await stored(records_of(app), played, "ROOM01", [None, None, await me.guest()])
    got = await me.get(f"/api/history/games/{gid}")
    assert got.status_code == 200
    facts = got.json()
    assert facts["game"] == "tiny" and facts["room"] == "ROOM01"
    assert facts["options"] == {"bonus": 2} and facts["result"] == played.result
    assert facts["status"] == "finished" and facts["finished_at"] and facts["started_at"]
    assert facts["actions"] == len(played.actions) and facts["my_seats"] == [2]
    assert [s["me"] for s in facts["seats"]] == [False, False, True]
    assert "987654321" not in got.text and "guest" not in got.text
    missing = await me.get("/api/history/games/99999")
    assert missing.status_code == 404 and missing.json()["detail"]["code"] == "no_such_game"


@pytest.mark.skipif(POSSO is None, reason="the Posso engine is not on disk yet")
async def test_a_posso_score_sheet_shows_every_hand(app: FastAPI, browsers: list[Browser]) -> None:
    assert POSSO is not None
    played = play(POSSO, 3, {"start_hand": 9, "cutting": "to_lead"}, seed=13)
    rows = [e["row"] for evs in played.events for e in evs if e["type"] == "hand_ended"]
    assert [r["hand"] for r in rows] == [9, 10]
    me = browsers[0]
    gid = await stored(records_of(app), played, "ROOM01", [await me.guest(), None, None])
    sheet = (await me.get(f"/api/history/games/{gid}/sheet")).json()
    assert [h["hand"] for h in sheet["hands"]] == [9, 10]
    for hand, row in zip(sheet["hands"], rows, strict=True):
        assert hand["row"] == row
        assert (hand["dealer"], hand["requirement"], hand["went_out"]) == (
            row["dealer"],
            row["requirement"],
            row["went_out"],
        )
        assert hand["cut"] == row["cut"] and hand["cut"] is not None
        assert [ln["points"] for ln in hand["lines"]] == row["points"]
        assert [ln["total"] for ln in hand["lines"]] == row["totals"]
        assert [ln["possos"] for ln in hand["lines"]] == row["possos"]
        assert [ln["went_out"] for ln in hand["lines"]] == [s == row["went_out"] for s in range(3)]
        assert [ln["cut"] is not None for ln in hand["lines"]] == [
            s == row["dealer"] for s in range(3)
        ]
    assert sheet["hands"][-1]["lines"][0]["total"] == played.result["scores"][0]  # type: ignore[index]


async def test_only_posso_has_a_score_sheet(app: FastAPI, browsers: list[Browser]) -> None:
    me = browsers[0]
    gid = await stored(
        records_of(app), play(TINY, 2, {}, seed=1), "ROOM01", [await me.guest(), None]
    )
    got = await me.get(f"/api/history/games/{gid}/sheet")
    assert got.status_code == 404 and "only Posso" in got.json()["detail"]["message"]


async def test_a_replay_can_be_fetched_a_window_at_a_time(
    app: FastAPI, browsers: list[Browser]
) -> None:
    played = play(TINY, 2, {}, seed=3)
    me = browsers[0]
    gid = await stored(records_of(app), played, "ROOM01", [await me.guest(), None])
    whole = (await me.get(f"/api/history/games/{gid}/replay")).json()["steps"]
    part = (await me.get(f"/api/history/games/{gid}/replay", start=2, limit=2)).json()
    assert part["steps"] == whole[2:4] and part["start"] == 2
    assert (await me.get(f"/api/history/games/{gid}/replay", start=-1)).status_code == 422


async def test_a_stored_card_never_reaches_a_spectator_before_the_end(
    app: FastAPI, browsers: list[Browser]
) -> None:
    """A room spectator may not replay a running game at all: live, they saw
    the spectator view, and the replay offers nothing more."""
    played = play(TINY, 2, {}, seed=6, max_actions=3)
    player, watcher = browsers[0], browsers[1]
    gid = await stored(
        records_of(app),
        played,
        "ROOM01",
        [await player.guest(), None],
        spectators=[await watcher.guest()],
    )
    got = await watcher.get(f"/api/history/games/{gid}/replay")
    assert got.status_code == 403
    cards = set(standard_deck())
    assert not [c for c in cards if f'"{c}"' in got.text]
    facts = await watcher.get(f"/api/history/games/{gid}")
    assert facts.status_code == 200 and facts.json()["status"] == "running"


async def test_without_a_database_history_says_so() -> None:
    bare = FastAPI()
    bare.include_router(history_api.router)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=bare), base_url="http://t") as c:
        got = await c.get("/api/me/games")
    assert got.status_code == 503 and "no game history" in got.json()["detail"]["message"]
