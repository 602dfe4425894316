"""Looking back: my past games, one game's facts, a Posso score sheet, a replay.

Who may see how much is decided in app/db/history.py (see the table there);
refusals are 403 with a message that says why.  The database comes from
`app.state.db_sessionmaker`, so the app factory decides which one.

A game is named by its public id (random: it counts nothing), which every
answer gives as `id` / `game_id`.  Its old sequential number, which links
made before public ids hold, still names it - but only for those the game
is shown to: anyone else is told there is no such game, as for a number
never used, so numbers cannot be walked to count games (`refused`).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Hashable
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.doors import REPLAYS, limited
from app.api.identity import Identity, identity
from app.db import history as h
from app.db.replay import Perspective, ReplayError, chapters, replay

router = APIRouter(tags=["history"])

#: steps per response: a step holds a view per visible seat (a few KB each), so a
#: long Posso game is fetched a page at a time (`start`, `limit`, `total_steps`)
PAGE_STEPS = 500
MAX_STEPS = 2000
#: ids are 32-bit integers in the database: a larger one names no game (and
#: would fail in the driver, not answer 404); found by tests/api/test_schema.py
MAX_ID = 2**31 - 1
#: a route's game id: a public id (app/store/records.py, `new_game_ref`), or a
#: game's old number (at most MAX_ID's ten digits; a larger one is checked)
GAME_REF = rf"^({h.NUMBER}|[A-Za-z0-9_-]{{16,32}})$"
#: bytes of finished games' replay pages kept in memory
REPLAY_CACHE_BYTES = 32 * 1024 * 1024
GameId = Annotated[str, Path(pattern=GAME_REF, max_length=32)]


def fail(status: int, code: str, message: str) -> HTTPException:
    return HTTPException(status, detail={"code": code, "message": message})


async def db_session(request: Request) -> AsyncIterator[AsyncSession]:
    maker = getattr(request.app.state, "db_sessionmaker", None)
    if maker is None:
        raise fail(503, "no_history", "this server keeps no game history (no database)")
    async with maker() as session:
        yield session


Db = Annotated[AsyncSession, Depends(db_session)]
Me = Annotated[Identity, Depends(identity)]


def who(me: Identity) -> h.Who:
    return h.Who(me.guest_id, me.account_id)


def no_game(ref: str) -> HTTPException:
    return fail(404, "no_such_game", f"there is no game {ref}")


async def found_game(db: AsyncSession, ref: str) -> h.GameInfo:
    """The game a route's id names, or 404."""
    game_id = await h.game_of_ref(db, ref)
    info = None if game_id is None or game_id > MAX_ID else await h.game_info(db, game_id)
    if info is None:
        raise no_game(ref)
    return info


async def refused(
    db: AsyncSession, info: h.GameInfo, ref: str, me: Identity, code: str, message: str
) -> HTTPException:
    """A 403 that says why; but for a game named by its old number, to an
    asker it is not shown to at all, the same 404 as a number no game has:
    numbers say nothing to strangers."""
    if ref.isdigit():
        try:
            await h.check_facts(db, info, who(me))
        except h.Refused:
            return no_game(ref)
    return fail(403, code, message)


async def visible_game(db: AsyncSession, ref: str, me: Identity) -> h.GameInfo:
    """The game's facts, or 404 / 403 (check_facts) for the asker."""
    info = await found_game(db, ref)
    try:
        await h.check_facts(db, info, who(me))
    except h.Refused as err:
        raise await refused(db, info, ref, me, "private_game", err.message) from None
    return info


@router.get("/api/me/games")
async def my_games(
    db: Db,
    me: Me,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    before: Annotated[str | None, Query(pattern=GAME_REF, max_length=32)] = None,
) -> dict[str, Any]:
    """This browser's games, and the account's when signed in; newest first.
    Page with `before` = `next_before` of the previous page (its last id)."""
    after = None
    if before is not None:
        after = await h.game_of_ref(db, before)
        if after is None:
            raise no_game(before)
        if after > MAX_ID:  # a number past every game: every game is before it
            after = None
    games = await h.games_of(db, who(me), limit=limit, before=after)
    more = len(games) == limit
    return {"games": games, "next_before": games[-1]["id"] if games and more else None}


@router.get("/api/history/games/{game_id}")
async def game_facts(game_id: GameId, db: Db, me: Me) -> dict[str, Any]:
    """Who played, when, the result; `id` is the game's public id."""
    info = await visible_game(db, game_id, me)
    out = info.summary(who(me))
    out["has_sheet"] = info.game == "posso"
    return out


@router.get("/api/history/games/{game_id}/sheet")
async def game_sheet(game_id: GameId, db: Db, me: Me) -> dict[str, Any]:
    info = await visible_game(db, game_id, me)
    if info.game != "posso":
        raise fail(
            404,
            "no_sheet",
            f"game {info.public_id} is {info.game}: only Posso keeps a score sheet",
        )
    return {
        "game_id": info.public_id,
        "status": "finished" if info.finished else "running",
        "seats": [{"seat": s.seat, "name": s.name} for s in info.seats],
        "hands": await h.score_sheet(db, info.id),
    }


class ReplayPages:
    """Finished games' replay pages, encoded once: a finished game never
    changes, so its pages are the same for every asker who sees it the same
    way.  Bounded by the bytes held; the least recently used go first."""

    def __init__(self, max_bytes: int = REPLAY_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.held = 0
        self.pages: OrderedDict[Hashable, bytes] = OrderedDict()

    def get(self, key: Hashable) -> bytes | None:
        page = self.pages.get(key)
        if page is not None:
            self.pages.move_to_end(key)
        return page

    def put(self, key: Hashable, page: bytes) -> None:
        if len(page) > self.max_bytes or key in self.pages:
            return
        self.pages[key] = page
        self.held += len(page)
        while self.held > self.max_bytes:
            _, old = self.pages.popitem(last=False)
            self.held -= len(old)


def replay_pages(request: Request) -> ReplayPages:
    pages: ReplayPages | None = getattr(request.app.state, "replay_pages", None)
    if pages is None:
        pages = request.app.state.replay_pages = ReplayPages()
    return pages


@router.get(
    "/api/history/games/{game_id}/replay",
    dependencies=[limited(REPLAYS)],
)
async def game_replay(
    request: Request,
    game_id: GameId,
    db: Db,
    me: Me,
    start: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_STEPS)] = PAGE_STEPS,
) -> Response:
    """Steps `start..start+limit` (step 0 is the deal, step k follows action k-1).
    The first page (`start=0`) also holds `chapters`, where each hand (Posso),
    trick (Big Two) or round (Possum, Possession) begins, for jumping to one.
    A finished game's pages are kept once made (ReplayPages), and every page
    counts against the address's replay limit: each may replay a whole game."""
    info = await found_game(db, game_id)
    try:
        perspective = await h.replay_perspective(db, info, who(me))
    except h.Refused as err:
        raise await refused(db, info, game_id, me, "replay_refused", err.message) from None
    key = (info.id, perspective, start, limit)
    cache = replay_pages(request)
    page = cache.get(key) if info.finished else None
    if page is None:
        body = await _replay_page(db, info, perspective, start, limit)
        page = orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
        if info.finished:
            cache.put(key, page)
    return Response(page, media_type="application/json")


async def _replay_page(
    db: AsyncSession, info: h.GameInfo, perspective: Perspective, start: int, limit: int
) -> dict[str, Any]:
    game_id = info.id
    log = await h.action_log(db, game_id)
    steps = await replay_steps(
        info.game, info.options, info.seed, len(info.seats), log, perspective, start, limit
    )
    body = {
        "game_id": info.public_id,
        "game": info.game,
        "status": "finished" if info.finished else "running",
        "perspective": perspective.kind,
        "seats": [{"seat": s.seat, "name": s.name} for s in info.seats],
        "total_steps": len(log) + 1,
        "start": start,
        "steps": steps,
        "result": info.result,
    }
    if start == 0:
        body["chapters"] = await replay_chapters(
            info.game, info.options, info.seed, len(info.seats), log
        )
    return body


async def replay_steps(
    game: str,
    options: dict[str, Any],
    seed: int,
    seats: int,
    log: list[tuple[int | None, dict[str, Any]]],
    perspective: Perspective,
    start: int,
    limit: int,
) -> list[dict[str, Any]]:
    """A window of a replay, rebuilt in a worker thread: the engines are pure,
    and the event loop keeps serving the rooms meanwhile.  A log that does not
    replay is a 409 that says why."""
    try:
        return await asyncio.to_thread(
            replay, game, options, seed, seats, log, perspective, start=start, limit=limit
        )
    except ReplayError as err:
        raise fail(409, "replay_broken", str(err)) from None


async def replay_chapters(
    game: str,
    options: dict[str, Any],
    seed: int,
    seats: int,
    log: list[tuple[int | None, dict[str, Any]]],
) -> dict[str, Any]:
    """Where each hand, trick or round begins (app/db/replay.py `chapters`),
    for a replay's first page: one walk through the log, in a worker thread."""
    try:
        return await asyncio.to_thread(chapters, game, options, seed, seats, log)
    except ReplayError as err:
        raise fail(409, "replay_broken", str(err)) from None
