"""DbRecords keeps what MemoryRecords keeps, in order, and still has it after a
restart (a new engine on the same database)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select, update

from app.db import records as db_records
from app.db.history import game_info
from app.db.models import (
    Account,
    ActionRow,
    GameRow,
    GameSeat,
    Player,
    Room,
    ScoreHand,
    ScoreLine,
)
from app.db.records import DbRecords
from app.db.session import make_engine
from app.db.sqlite_appends import FastAppends
from app.store.records import MemoryRecords, PlayerRecord, Records, ReplacedToken, RoomRecord


def room(code: str = "ABC234", *, closed: bool = False, players: int = 3) -> RoomRecord:
    return RoomRecord(
        code=code,
        game="posso",
        options={"cutting": "off"},
        settings={"posso_window": 3.0, "public_replays": False},
        host_player_id="p0",
        players=[
            PlayerRecord(f"p{i}", f"Player {i}", f"hash{i}", i, guest_id=f"guest{i}")
            for i in range(players)
        ]
        + [PlayerRecord("bot", "Robo", "", None, is_bot=True, bot_level="strong")],
        tally={"p0": 2},
        closed=closed,
    )


async def script(rec: Records) -> None:
    """Two rooms, a finished game, an unfinished one with a log, a closed room."""
    await rec.save_room(room("ROOM01"))
    await rec.save_room(room("ROOM02"))
    await rec.save_room(room("GONE99", closed=True))
    done = await rec.start_game("ROOM01", "posso", {"cutting": "off"}, 41, ["p0", "p1", "p2"])
    await rec.append_action(done, 0, 0, {"type": "draw", "source": "stack"})
    await rec.finish_game(done, {"places": [[0], [1, 2]], "scores": [0, 5, 5]})
    live = await rec.start_game("ROOM01", "posso", {"cutting": "off"}, 42, ["p2", "p0", "p1"])
    for seq, (seat, action) in enumerate(
        [
            (2, {"type": "draw", "source": "pile"}),
            (None, {"type": "timeout"}),
            (0, {"type": "discard", "card": "10H"}),
        ]
    ):
        await rec.append_action(live, seq, seat, action)


def _comparable(rooms: list[Any]) -> list[Any]:
    out = []
    for r, g in sorted(rooms, key=lambda x: x[0].code):
        game = (
            None
            if g is None
            else (g.room_code, g.game, g.options, g.seed, g.seats, g.actions, g.result)
        )
        out.append((r, game))
    return out


async def test_live_rooms_are_what_memory_records_would_give(records: DbRecords) -> None:
    memory = MemoryRecords()
    await script(memory)
    await script(records)
    assert _comparable(await records.live_rooms()) == _comparable(await memory.live_rooms())


async def test_replaced_tokens_are_kept_and_a_room_the_last_release_saved_has_none(
    records: DbRecords,
) -> None:
    kept = room("ROOM03")
    kept.replaced = {"h" * 64: ReplacedToken("Player 1", "Player 0", own=False, at=1234.5)}
    await records.save_room(kept)
    loaded = await records.load_room("ROOM03")
    assert loaded is not None and loaded[0].replaced == kept.replaced
    live = {r.code: r for r, _ in await records.live_rooms()}
    assert live["ROOM03"].replaced == kept.replaced
    # the release before 0008_replaced_tokens leaves the column null
    async with records.engine.begin() as conn:
        await conn.execute(update(Room).where(Room.code == "ROOM03").values(replaced=None))
    loaded = await records.load_room("ROOM03")
    assert loaded is not None and loaded[0].replaced == {}


async def test_a_restarted_server_finds_every_live_game_with_its_whole_log(db_url: str) -> None:
    first = DbRecords(make_engine(db_url))
    await script(first)
    await first.close()  # the process is gone; only the database remains
    second = DbRecords(make_engine(db_url))
    try:
        live = {r.code: (r, g) for r, g in await second.live_rooms()}
        assert set(live) == {"ROOM01", "ROOM02"}
        r, g = live["ROOM01"]
        assert g is not None and g.seed == 42 and g.seats == ["p2", "p0", "p1"]
        assert g.actions == [
            (2, {"type": "draw", "source": "pile"}),
            (None, {"type": "timeout"}),
            (0, {"type": "discard", "card": "10H"}),
        ]
        assert [p.player_id for p in r.players] == ["p0", "p1", "p2", "bot"]
        assert r.players[3].is_bot and r.players[3].seat is None
        assert r.players[3].bot_level == "strong" and r.players[0].bot_level is None
        assert r.players[1].token_hash == "hash1" and r.players[1].guest_id == "guest1"
        assert r.tally == {"p0": 2} and r.settings["posso_window"] == 3.0
        assert live["ROOM02"][1] is None
        # the next action carries on from where the log stopped
        await second.append_action(g.game_id, 3, 1, {"type": "draw", "source": "stack"})
    finally:
        await second.close()


async def test_an_action_out_of_order_or_repeated_is_refused_and_changes_nothing(
    records: DbRecords,
) -> None:
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    await records.append_action(gid, 0, 0, {"type": "a"})
    await records.append_action(gid, 1, 1, {"type": "b"})
    for seq in (1, 0, 3, 7):
        with pytest.raises(
            ValueError, match=f"action {seq} of game {gid} out of order \\(have 2\\)"
        ):
            await records.append_action(gid, seq, 0, {"type": "x"})
    with pytest.raises(ValueError, match="int >= 0"):
        await records.append_action(gid, -1, 0, {"type": "x"})
    with pytest.raises(KeyError, match="no game 999"):
        await records.append_action(999, 0, 0, {"type": "x"})
    with pytest.raises(KeyError, match="no game 999"):
        await records.append_action(999, 4, 0, {"type": "x"})
    ((_, game),) = [x for x in await records.live_rooms() if x[1] is not None]
    assert game is not None and game.actions == [(0, {"type": "a"}), (1, {"type": "b"})]


async def test_a_log_another_writer_extended_refuses_what_this_process_thought_came_next(
    records: DbRecords, db_url: str
) -> None:
    """SQLite appends trust the last seq this process committed instead of
    reading the log (app/db/sqlite_appends.py): one that another writer
    extended meanwhile must still refuse the seq it already holds, and a gap."""
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    await records.append_action(gid, 0, 0, {"type": "a"})
    await records.append_action(gid, 1, 1, {"type": "b"})
    other = DbRecords(make_engine(db_url))
    try:
        await other.append_action(gid, 2, 0, {"type": "theirs"})
    finally:
        await other.close()
    for seq in (2, 4):
        with pytest.raises(ValueError, match=f"action {seq} of game {gid} out of order"):
            await records.append_action(gid, seq, 1, {"type": "mine"})
    await records.append_action(gid, 3, 1, {"type": "next"})
    ((_, game),) = [x for x in await records.live_rooms() if x[1] is not None]
    assert game is not None
    assert [a["type"] for _, a in game.actions] == ["a", "b", "theirs", "next"]


async def test_concurrent_rooms_each_keep_a_complete_ordered_log(records: DbRecords) -> None:
    codes = [f"R{i:05d}" for i in range(8)]
    for code in codes:
        await records.save_room(room(code, players=2))
    games = [
        await records.start_game(c, "bigtwo", {}, i, ["p0", "p1"]) for i, c in enumerate(codes)
    ]

    async def play(gid: int) -> None:
        for seq in range(25):
            await records.append_action(gid, seq, seq % 2, {"type": "play", "n": seq})

    await asyncio.gather(*(play(g) for g in games))
    for _, g in await records.live_rooms():
        assert g is not None
        assert g.actions == [(seq % 2, {"type": "play", "n": seq}) for seq in range(25)]


async def test_json_columns_hold_what_the_json_module_would(records: DbRecords) -> None:
    """orjson encodes the JSON columns: what comes back is what json.dumps and
    json.loads would give, integer keys turned into strings included."""
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    action = {"type": "say", "text": 'h\u00e9llo \u2713 "q" </script>', "cards": ["10H"], "n": 1.5}
    result = {"places": [[0], [1]], "by_seat": {0: 3, 1: -2}}
    await records.append_action(gid, 0, 0, action)
    await records.finish_game(gid, result)
    async with records.sessions() as s:
        stored = await s.scalar(select(ActionRow.action).where(ActionRow.game_id == gid))
        kept = await s.scalar(select(GameRow.result).where(GameRow.id == gid))
    assert stored == json.loads(json.dumps(action))
    assert (
        kept
        == json.loads(json.dumps(result))
        == {"places": [[0], [1]], "by_seat": {"0": 3, "1": -2}}
    )


async def test_finished_games_and_closed_rooms_are_not_live(records: DbRecords) -> None:
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    await records.finish_game(gid, {"places": [[1], [0]], "scores": [9, 0]})
    [(_, g)] = await records.live_rooms()
    assert g is None
    await records.save_room(room(closed=True))
    assert await records.live_rooms() == []
    with pytest.raises(KeyError):
        await records.finish_game(12345, {"places": [], "scores": []})


async def test_a_code_used_again_after_closing_is_a_new_room(records: DbRecords) -> None:
    await records.save_room(room("SAME22"))
    old = await records.start_game("SAME22", "posso", {}, 1, ["p0", "p1", "p2"])
    await records.save_room(room("SAME22", closed=True))
    fresh = RoomRecord("SAME22", "bigtwo", {}, {}, "q0", [PlayerRecord("q0", "New", "h", 0)])
    await records.save_room(fresh)
    [(r, g)] = await records.live_rooms()
    assert r.game == "bigtwo" and [p.player_id for p in r.players] == ["q0"] and g is None
    async with records.sessions() as s:
        seats = await s.scalar(
            select(func.count()).select_from(GameSeat).where(GameSeat.game_id == old)
        )
    assert seats == 3  # the old game still knows its players
    new = await records.start_game("SAME22", "bigtwo", {}, 2, ["q0"])
    [(r, g)] = await records.live_rooms()
    assert r.game == "bigtwo" and g is not None and g.game_id == new


async def test_a_player_who_leaves_is_gone_from_the_room_but_not_from_the_game(
    records: DbRecords,
) -> None:
    await records.save_room(room())
    await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1", "p2"])
    smaller = room()
    smaller.players = [p for p in smaller.players if p.player_id != "p2"]
    await records.save_room(smaller)
    [(r, g)] = await records.live_rooms()
    assert [p.player_id for p in r.players] == ["p0", "p1", "bot"]
    assert g is not None and g.seats == ["p0", "p1", "p2"]
    async with records.sessions() as s:
        gone = (await s.scalars(select(Player).where(Player.player_id == "p2"))).one()
    assert not gone.present and gone.guest_id == "guest2"


async def test_a_save_without_ids_keeps_the_known_guest_and_account(records: DbRecords) -> None:
    await records.save_room(room())
    async with records.sessions.begin() as s:
        account = Account(name="Ana", name_key="ana", password_hash="x")
        s.add(account)
        await s.flush()
        p0 = (await s.scalars(select(Player).where(Player.player_id == "p0"))).one()
        p0.account_id = account.id  # as signing up links a guest's seats
    again = room()
    again.players[0].guest_id = None
    again.players[0].name = "Renamed"
    await records.save_room(again)
    [(r, _)] = await records.live_rooms()
    assert r.players[0].name == "Renamed"
    assert (r.players[0].guest_id, r.players[0].account_id) == ("guest0", account.id)


@contextlib.contextmanager
def statements(records: DbRecords) -> Iterator[list[str]]:
    """The SQL statements the records send meanwhile, without the transaction
    and savepoint statements around them.  On SQLite's writer they are read
    from the driver's own trace: some go to the driver directly
    (app/db/driver_rows.py), past SQLAlchemy's events."""
    seen: list[str] = []

    def note(sql: str) -> None:
        """The driver's trace shows each row of an executemany: a run of them
        (one verb on one table) is one statement."""
        words = sql.split()
        if words[0].upper() not in _FRAMING and (not seen or seen[-1].split()[:3] != words[:3]):
            seen.append(" ".join(words))

    drivers = [
        fast.connection.connection.dbapi_connection
        for fast in (records._fast, records._inline)
        if fast is not None
    ]
    for driver in drivers:
        driver.set_trace_callback(note)
    engine = records.engine.sync_engine

    def heard(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        note(sql)

    if not drivers:
        event.listen(engine, "before_cursor_execute", heard)
    try:
        yield seen
    finally:
        for driver in drivers:
            driver.set_trace_callback(None)
        if not drivers:
            event.remove(engine, "before_cursor_execute", heard)


_FRAMING = {"BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE"}


async def test_a_rematch_writes_what_changed_and_asks_nothing(records: DbRecords) -> None:
    """Between two games of the same seats the room's rows are already known:
    the finished game and the new tally are updated, the new game inserted,
    and no statement reads the database to find them."""
    await records.save_room(room())
    first = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1", "p2"])
    await records.save_room(room())  # unchanged: nothing to write
    with statements(records) as seen:
        await records.finish_game(first, {"places": [[0], [1, 2]]})
        after = room()
        after.tally = {"p0": 3}
        await records.save_room(after)
        second = await records.start_game("ABC234", "posso", {}, 2, ["p1", "p2", "p0"])
    # the finished game's result and its records summaries (app/db/summaries.py:
    # read its seats - never summed, so nothing to clear - insert them, add to
    # the people's and the pairs' sums), the room's tally, the new game and its seats
    assert [sql.split()[0] for sql in seen] == [
        *("UPDATE", "SELECT", "INSERT", "INSERT", "INSERT"),
        *("UPDATE", "INSERT", "INSERT"),
    ]
    [(r, g)] = await records.live_rooms()
    assert r.tally == {"p0": 3} and g is not None and g.game_id == second
    async with records.sessions() as s:
        info = await game_info(s, second)
    assert info is not None
    assert [x.name for x in info.seats] == ["Player 1", "Player 2", "Player 0"]


async def test_a_name_saved_between_games_is_the_one_the_next_game_seats(
    records: DbRecords,
) -> None:
    """The seats a game records carry each player's name as last saved, even
    when the same seats played the game before (whose rows are remembered)."""
    await records.save_room(room())
    await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1", "p2"])
    renamed = room()
    renamed.players[1].name = "Bea"
    await records.save_room(renamed)
    second = await records.start_game("ABC234", "posso", {}, 2, ["p0", "p1", "p2"])
    async with records.sessions() as s:
        info = await game_info(s, second)
    assert info is not None
    assert [x.name for x in info.seats] == ["Player 0", "Bea", "Player 2"]


async def test_a_save_that_fails_leaves_nothing_for_later_writes_to_trust(
    records: DbRecords,
) -> None:
    """A new room whose save fails part way (a player without a name) is not
    there afterwards: a game cannot start in it, and a good save makes it."""
    broken = room("HALF01")
    broken.players[1].name = None  # type: ignore[assignment]
    with pytest.raises(Exception, match=r"(?i)not null|null value"):
        await records.save_room(broken)
    with pytest.raises(ValueError, match="no open room 'HALF01'"):
        await records.start_game("HALF01", "posso", {}, 1, ["p0", "p1", "p2"])
    await records.save_room(room("HALF01"))
    gid = await records.start_game("HALF01", "posso", {}, 1, ["p0", "p1", "p2"])
    [(r, g)] = await records.live_rooms()
    assert r.code == "HALF01" and len(r.players) == 4 and g is not None and g.game_id == gid


async def test_starting_a_game_needs_an_open_room(records: DbRecords) -> None:
    with pytest.raises(ValueError, match="no open room 'NOPE00'"):
        await records.start_game("NOPE00", "posso", {}, 1, ["p0"])


async def test_bots_a_room_seats_as_the_game_starts_are_filled_in_by_the_next_save(
    records: DbRecords,
) -> None:
    """The room layer adds bots, starts the game, and only then saves the room."""
    before = room(players=2)
    await records.save_room(before)
    gid = await records.start_game("ABC234", "bigtwo", {}, 1, ["p0", "p1", "b2", "b3"])
    after = room(players=2)
    after.players += [PlayerRecord(f"b{i}", f"Bot {i}", "", i, is_bot=True) for i in (2, 3)]
    await records.save_room(after)
    [(r, g)] = await records.live_rooms()
    assert [p.player_id for p in r.players] == ["p0", "p1", "bot", "b2", "b3"]
    assert [p.is_bot for p in r.players] == [False, False, True, True, True]
    assert g is not None and g.game_id == gid and g.seats == ["p0", "p1", "b2", "b3"]
    async with records.sessions() as s:
        info = await game_info(s, gid)
    assert info is not None
    assert [(x.name, x.is_bot) for x in info.seats] == [
        ("Player 0", False),
        ("Player 1", False),
        ("Bot 2", True),
        ("Bot 3", True),
    ]


async def test_any_seed_the_engines_accept_comes_back_unchanged(records: DbRecords) -> None:
    await records.save_room(room())
    seed = 2**64 + 12345  # more than a 64-bit column holds
    await records.start_game("ABC234", "posso", {}, seed, ["p0", "p1"])
    [(_, g)] = await records.live_rooms()
    assert g is not None and g.seed == seed


POSSO_ROW: dict[str, Any] = {
    "hand": 2,
    "dealer": 1,
    "requirement": {"text": "1 set of 3, 1 run of 4", "melds": [{"kind": "set", "size": 3}]},
    "went_out": 2,
    "points": [35, 10, 0],
    "totals": [60, 10, 5],
    "toilet": [False, False, False],
    "cut": {
        "at": 0.5,
        "count": 24,
        "target": 25,
        "hit": True,
        "effect": {"seat": 1, "before": 30, "after": 10},
    },
    "possos": [1, 0, 2],
}


async def test_a_posso_sheet_row_is_kept_whole_and_one_line_per_player(records: DbRecords) -> None:
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1", "p2"])
    await records.save_score_hand(gid, 2, POSSO_ROW)
    changed = {**POSSO_ROW, "points": [40, 10, 0], "totals": [65, 10, 5]}
    await records.save_score_hand(gid, 2, changed)  # a hand saved again replaces its row
    async with records.sessions() as s:
        hand = (await s.scalars(select(ScoreHand))).one()
        lines = (await s.scalars(select(ScoreLine).order_by(ScoreLine.seat))).all()
    assert hand.row == changed and list(hand.row) == list(POSSO_ROW)  # key order kept
    assert (hand.dealer, hand.went_out) == (1, 2) and hand.requirement == POSSO_ROW["requirement"]
    assert [(ln.seat, ln.points, ln.total, ln.went_out, ln.posso_count) for ln in lines] == [
        (0, 40, 65, False, 1),
        (1, 10, 10, False, 0),
        (2, 0, 5, True, 2),
    ]
    assert [ln.cut for ln in lines] == [None, POSSO_ROW["cut"], None]  # the dealer's cut
    with pytest.raises(KeyError):
        await records.save_score_hand(999, 1, POSSO_ROW)


async def test_each_append_is_committed_before_it_returns(records: DbRecords, db_url: str) -> None:
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    other = make_engine(db_url)  # another connection sees it at once: nothing is pending
    try:
        for seq in range(3):
            await records.append_action(gid, seq, 0, {"type": "x", "n": seq})
            async with other.connect() as conn:
                count = await conn.scalar(
                    select(func.count()).select_from(ActionRow).where(ActionRow.game_id == gid)
                )
            assert count == seq + 1
    finally:
        await other.dispose()


async def test_appends_that_arrive_together_commit_together_and_a_bad_one_fails_alone(
    records: DbRecords,
) -> None:
    """Many rooms' actions in flight at once (the SQLite writer groups them into
    shared transactions): each caller learns its own outcome, a repeated seq is
    refused without undoing its batch-mates, and every accepted action is there
    for a fresh connection."""
    codes = [f"G{i:05d}" for i in range(40)]
    for code in codes:
        await records.save_room(room(code, players=2))
    games = [
        await records.start_game(c, "possum", {}, i, ["p0", "p1"]) for i, c in enumerate(codes)
    ]
    await asyncio.gather(*(records.append_action(g, 0, 0, {"type": "draw"}) for g in games))

    appends = [records.append_action(g, 1, 1, {"type": "draw", "g": g}) for g in games]
    appends.append(records.append_action(games[7], 0, 0, {"type": "again"}))  # a repeat
    outcomes = await asyncio.gather(*appends, return_exceptions=True)

    assert outcomes[:-1] == [None] * len(games)
    assert isinstance(outcomes[-1], ValueError) and "out of order" in str(outcomes[-1])
    fresh = DbRecords(make_engine(str(records.engine.url.render_as_string(hide_password=False))))
    try:
        logs = {g.game_id: g.actions for _, g in await fresh.live_rooms() if g is not None}
    finally:
        await fresh.close()
    assert logs == {g: [(0, {"type": "draw"}), (1, {"type": "draw", "g": g})] for g in games}


async def test_a_batch_keeps_one_games_appends_in_order_and_fails_a_missing_game_alone(
    records: DbRecords,
) -> None:
    """Rooms wait for each append, but nothing in the records relies on it: a
    game's successive actions arriving together are stored in order (PostgreSQL
    puts them in successive statements), and an append to a game that does not
    exist fails without taking the rest of its batch down."""
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    together = await asyncio.gather(
        *(records.append_action(gid, seq, seq % 2, {"type": "x", "n": seq}) for seq in range(4))
    )
    assert together == [None] * 4
    outcomes = await asyncio.gather(
        records.append_action(gid, 4, 0, {"type": "x", "n": 4}),
        records.append_action(999, 0, 0, {"type": "x"}),
        return_exceptions=True,
    )
    assert outcomes[0] is None
    assert isinstance(outcomes[1], KeyError) and "no game 999" in str(outcomes[1])
    logs = {g.game_id: g.actions for _, g in await records.live_rooms() if g is not None}
    assert logs[gid] == [(seq % 2, {"type": "x", "n": seq}) for seq in range(5)]


async def test_other_writes_share_the_batch_and_a_failing_one_undoes_only_itself(
    records: DbRecords,
) -> None:
    """Room saves, game starts and finishes arrive amid appends (on SQLite they
    ride the same group commit): one that fails - a finish for no game, a start
    for no room - raises its own error, and everything beside it is kept."""
    codes = [f"M{i:05d}" for i in range(20)]
    for code in codes:
        await records.save_room(room(code, players=2))
    games = [
        await records.start_game(c, "possum", {}, i, ["p0", "p1"]) for i, c in enumerate(codes)
    ]
    writes: list[Any] = [records.append_action(g, 0, 0, {"type": "draw", "g": g}) for g in games]
    writes += [
        records.finish_game(10**9, {"places": []}),
        records.start_game("NOSUCH", "possum", {}, 1, ["p0", "p1"]),
        records.finish_game(games[0], {"places": [[0], [1]], "scores": [1, 2]}),
        records.save_room(room("NEW001", players=2)),
        records.start_game(codes[1], "possum", {}, 99, ["p1", "p0"]),
    ]
    outcomes = await asyncio.gather(*writes, return_exceptions=True)

    assert outcomes[: len(games)] == [None] * len(games)
    missing_game, missing_room, finished, saved, started = outcomes[len(games) :]
    assert isinstance(missing_game, KeyError)
    assert isinstance(missing_room, ValueError) and "NOSUCH" in str(missing_room)
    assert finished is None and saved is None and isinstance(started, int)
    live = {r.code: g for r, g in await records.live_rooms()}
    assert "NEW001" in live and live["NEW001"] is None
    assert live[codes[0]] is None  # its one game finished
    assert live[codes[1]] is not None and live[codes[1]].game_id == started
    assert all(live[c] is not None and live[c].actions for c in codes[2:])


async def test_an_appended_row_reads_back_as_the_orm_would_have_written_it(
    records: DbRecords,
) -> None:
    """SQLite appends skip SQLAlchemy on the way in (app/db/sqlite_appends.py):
    the row must still read back through it, key order, text and time intact."""
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    action = {"type": "meld", "cards": ["10H", "JH", "QH"], "note": 'Zoë\'s "run"', "n": 1.5}
    before = datetime.now(UTC)
    await records.append_action(gid, 0, None, action)
    await records.append_action(gid, 1, 1, {"z": 1, "a": 2})
    async with records.sessions() as s:
        rows = (
            await s.scalars(select(ActionRow).where(ActionRow.game_id == gid).order_by("seq"))
        ).all()
    assert [(r.seq, r.seat, r.action) for r in rows] == [
        (0, None, action),
        (1, 1, {"z": 1, "a": 2}),
    ]
    assert list(rows[1].action) == ["z", "a"]
    stamp = rows[0].created_at.replace(tzinfo=rows[0].created_at.tzinfo or UTC)
    assert before - timedelta(seconds=1) <= stamp <= datetime.now(UTC) + timedelta(seconds=1)


def _sqlite_path(records: DbRecords) -> str:
    if records.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's own write path")
    path = records.engine.url.database
    assert path
    return path


async def _game_with_loop_connection(records: DbRecords) -> int:
    """Room ABC234 and a game in it, its action 0 stored, and the event loop's
    own SQLite connection open (the first append opens it)."""
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    await records.append_action(gid, 0, 0, {"type": "draw"})
    assert records._opening is not None
    await records._opening
    assert records._inline is not None and records._inline.connected
    return gid


async def test_a_lone_append_in_a_quiet_moment_commits_without_a_turn_of_the_loop(
    records: DbRecords,
) -> None:
    """A move after a pause is committed as it is asked for: the loop never
    turns (a callback queued before it has not run), and it is stored."""
    _sqlite_path(records)
    gid = await _game_with_loop_connection(records)
    await asyncio.sleep(2 * db_records.QUIET_GAP)
    ran: list[int] = []
    asyncio.get_running_loop().call_soon(ran.append, 1)
    await records.append_action(gid, 1, 0, {"type": "draw"})
    assert ran == [], "the append waited for the loop's next turn"
    async with records.sessions() as s:
        logged = (await s.scalars(select(ActionRow.seq).where(ActionRow.game_id == gid))).all()
    assert sorted(logged) == [0, 1]


async def test_append_now_stores_a_quiet_move_or_leaves_it_all_to_append_action(
    records: DbRecords,
) -> None:
    """`append_now` (what a room tries first): on SQLite, a move after a pause
    is stored at once, with no await; one that follows at once, a move whose
    seq is taken, and any move on PostgreSQL are not touched (False), and
    `append_action` then does as it always did, refusal included."""
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    if records.engine.dialect.name != "sqlite":
        assert records.append_now(gid, 0, 0, {"type": "draw"}) is False
        assert await _logged(records, gid) == []
        return
    await records.append_action(gid, 0, 0, {"type": "draw"})
    assert records._opening is not None
    await records._opening  # the loop's own connection, opened off the loop
    await asyncio.sleep(2 * db_records.QUIET_GAP)
    assert records.append_now(gid, 1, 1, {"type": "draw", "n": 1}) is True
    # at once after it: not quiet, so nothing is done here
    assert records.append_now(gid, 2, 0, {"type": "draw"}) is False
    assert await _logged(records, gid) == [0, 1]
    await records.append_action(gid, 2, 0, {"type": "draw"})
    await asyncio.sleep(2 * db_records.QUIET_GAP)
    # a seq already stored: left to append_action, which refuses it by name
    assert records.append_now(gid, 2, 1, {"type": "draw"}) is False
    with pytest.raises(ValueError, match="out of order"):
        await records.append_action(gid, 2, 1, {"type": "draw"})
    assert await _logged(records, gid) == [0, 1, 2]


async def _logged(records: DbRecords, gid: int) -> list[int]:
    async with records.sessions() as s:
        return sorted(
            (await s.scalars(select(ActionRow.seq).where(ActionRow.game_id == gid))).all()
        )


async def test_appends_asked_for_together_still_share_a_commit(
    records: DbRecords, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moves of three rooms in one moment: the first commits at once, the
    two that follow within QUIET_GAP wait for the loop's next turn and go in
    one transaction; then, after a pause, a lone one commits at once again."""
    _sqlite_path(records)
    games = [await _game_with_loop_connection(records)]
    games += [await records.start_game("ABC234", "posso", {}, n, ["p0", "p1"]) for n in (2, 3)]
    for gid in games[1:]:
        await records.append_action(gid, 0, 0, {"type": "draw"})
    batches: list[int] = []
    together = db_records._write_together

    def counted(fast: Any, jobs: list[Any]) -> Any:
        batches.append(len(jobs))
        return together(fast, jobs)

    monkeypatch.setattr(db_records, "_write_together", counted)
    await asyncio.sleep(2 * db_records.QUIET_GAP)
    await asyncio.gather(*(records.append_action(g, 1, 0, {"type": "draw"}) for g in games))
    assert batches == [1, 2]
    await asyncio.sleep(2 * db_records.QUIET_GAP)
    await records.append_action(games[0], 2, 0, {"type": "draw"})
    assert batches == [1, 2, 1]
    async with records.sessions() as s:
        rows = (await s.execute(select(ActionRow.game_id, ActionRow.seq))).all()
    assert sorted(rows) == sorted([(g, q) for g in games for q in (0, 1)] + [(games[0], 2)])


@contextlib.contextmanager
def _locked_elsewhere(path: str) -> Iterator[None]:
    """Another process's write transaction on the database, for the block."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("COMMIT")
        other.close()


async def test_a_write_lock_held_elsewhere_is_waited_for_off_the_event_loop(
    records: DbRecords,
) -> None:
    """Appends commit on the event loop only while the database is free: with
    another process's transaction open, the batch waits in the writer thread and
    every room keeps running meanwhile."""
    path = _sqlite_path(records)
    gid = await _game_with_loop_connection(records)
    with _locked_elsewhere(path):
        append = asyncio.create_task(records.append_action(gid, 1, 0, {"type": "draw"}))
        started = time.monotonic()
        for _ in range(20):  # 0.2 s in which the loop must not stall
            await asyncio.sleep(0.01)
        assert time.monotonic() - started < 2.0  # (a wait on the loop would take 10 s)
        assert not append.done()
    await asyncio.wait_for(append, 10)
    live = {r.code: g for r, g in await records.live_rooms()}
    assert live["ABC234"] is not None
    assert live["ABC234"].actions == [(0, {"type": "draw"}), (0, {"type": "draw"})]


async def test_an_append_queued_while_this_process_writes_waits_for_that_write(
    records: DbRecords,
) -> None:
    """The group commit runs on the loop with no task of its own (`_flush`),
    but never inside another write of this process (`writing()`, held across
    awaits by writes through SQLAlchemy): a batch queued meanwhile waits for
    it, then commits."""
    _sqlite_path(records)
    gid = await _game_with_loop_connection(records)
    async with records.writing():
        append = asyncio.create_task(records.append_action(gid, 1, 0, {"type": "draw"}))
        for _ in range(10):
            await asyncio.sleep(0)
        assert not append.done()
    await asyncio.wait_for(append, 10)
    live = {r.code: g for r, g in await records.live_rooms()}
    assert live["ABC234"] is not None
    assert live["ABC234"].actions == [(0, {"type": "draw"}), (0, {"type": "draw"})]


async def test_other_writes_wait_for_a_lock_held_elsewhere_off_the_event_loop(
    records: DbRecords,
) -> None:
    """A batch with a room save and a game start in it commits on the event
    loop too - unless another process holds the lock: then it waits in the
    writer thread, appends included, while the loop runs on."""
    path = _sqlite_path(records)
    gid = await _game_with_loop_connection(records)
    with _locked_elsewhere(path):
        writes = asyncio.gather(
            records.append_action(gid, 1, 0, {"type": "draw"}),
            records.save_room(room("XYZ234")),
            records.finish_game(gid, {"places": [[0], [1]], "scores": [1, 0]}),
        )
        for _ in range(20):  # 0.2 s in which the loop must not stall
            await asyncio.sleep(0.01)
        assert not writes.done()
    await asyncio.wait_for(writes, 10)
    live = {r.code: g for r, g in await records.live_rooms()}
    assert set(live) == {"ABC234", "XYZ234"}
    assert live["ABC234"] is None  # finished
    async with records.sessions() as s:
        logged = (await s.scalars(select(ActionRow.seq).where(ActionRow.game_id == gid))).all()
    assert sorted(logged) == [0, 1]


async def test_the_log_reaches_the_database_file_by_checkpoints_off_the_loop(
    records: DbRecords,
) -> None:
    """Commits on the loop never copy the write-ahead log back (that waits for
    the disk); a checkpoint in the writer thread does, about once a second."""
    path = _sqlite_path(records)
    await records.save_room(room())
    gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
    for seq in range(5):
        await records.append_action(gid, seq, 0, {"type": "x", "n": seq})

    def in_file() -> int:  # what the database file itself holds, ignoring the log
        db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        try:
            return int(db.execute("SELECT count(*) FROM actions").fetchone()[0])
        finally:
            db.close()

    records._checkpointed -= 1.0  # as if a second had passed
    await records.append_action(gid, 5, 0, {"type": "x", "n": 5})
    assert records._checkpointing is not None
    await records._checkpointing
    assert in_file() == 6


async def test_a_database_told_to_flush_every_commit_writes_from_the_thread(db_url: str) -> None:
    """`?synchronous=full` makes each commit wait for the disk, so no append is
    committed on the event loop."""
    if not db_url.startswith("sqlite"):
        pytest.skip("SQLite's own write path")
    records = DbRecords(make_engine(db_url + "?synchronous=full"))
    try:
        assert records._inline is None
        await records.save_room(room())
        gid = await records.start_game("ABC234", "posso", {}, 1, ["p0", "p1"])
        await records.append_action(gid, 0, 0, {"type": "x"})
        await records.append_action(gid, 1, 1, {"type": "y"})
        live = {r.code: g for r, g in await records.live_rooms()}
        assert live["ABC234"] is not None
        assert live["ABC234"].actions == [(0, {"type": "x"}), (1, {"type": "y"})]
    finally:
        await records.close()


async def test_a_batch_over_more_games_than_one_lookup_covers_keeps_every_log_in_order(
    records: DbRecords, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite checks a batch's order with one lookup of each game's last action
    per 512 games; a batch of 600 games' next actions goes in whole, without
    the row-by-row replay, and a gap in one game's log is refused without
    taking the others down."""
    replays: list[int] = []
    replay = DbRecords._write_each

    def counted(self: DbRecords, jobs: list[Any]) -> list[tuple[bool, Any]]:
        replays.append(len(jobs))
        return replay(self, jobs)

    monkeypatch.setattr(DbRecords, "_write_each", counted)
    await records.save_room(room())
    games = [await records.start_game("ABC234", "posso", {}, g, ["p0", "p1"]) for g in range(600)]
    await asyncio.gather(*(records.append_action(g, 0, 0, {"type": "x"}) for g in games))
    await asyncio.gather(*(records.append_action(g, 1, 1, {"type": "y"}) for g in games))
    assert replays == []  # in order: the batch went in as it was
    outcomes = await asyncio.gather(
        *(records.append_action(g, 2, 0, {"type": "z"}) for g in games[:-1]),
        records.append_action(games[-1], 3, 0, {"type": "gap"}),
        return_exceptions=True,
    )
    assert outcomes[:-1] == [None] * 599
    assert isinstance(outcomes[-1], ValueError) and "out of order" in str(outcomes[-1])
    async with records.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(ActionRow.game_id, ActionRow.action).order_by(
                    ActionRow.game_id, ActionRow.seq
                )
            )
        ).all()
    logs: dict[int, list[str]] = {}
    for game_id, action in rows:
        logs.setdefault(game_id, []).append(action["type"])
    assert all(logs[g] == ["x", "y", "z"] for g in games[:-1])
    assert logs[games[-1]] == ["x", "y"]


async def test_a_room_loads_with_its_latest_snapshot_and_the_log_after_it(
    records: DbRecords,
) -> None:
    """What a lazy rebuild reads, the same on both databases as in memory: the
    open rooms' codes, one room with its snapshot and the actions after it, the
    log's length (to settle an append with no answer), the stored sheet hands."""
    from app.store.records import Snapshot

    memory = MemoryRecords()
    for rec in (records, memory):
        await script(rec)
        live = 2
        await rec.save_snapshot(live, Snapshot(1, "engine-a", b"\x00state one"))
        await rec.save_snapshot(live, Snapshot(2, "engine-b", b"\x00state two"))
        await rec.save_score_hand(live, 1, {"hand": 1, "points": [1, 2, 3], "totals": [1, 2, 3]})
    assert sorted(await records.open_rooms()) == sorted(await memory.open_rooms())
    assert sorted(await records.open_rooms()) == ["ROOM01", "ROOM02"]
    assert await records.load_room("GONE99") is None
    assert await records.load_room("NOPE00") is None
    found = await records.load_room("ROOM01")
    assert found is not None and found[1] is not None
    stored, game = found
    assert stored == (await memory.load_room("ROOM01"))[0]  # type: ignore[index]
    assert game.game_id == 2 and game.seed == 42 and game.seats == ["p2", "p0", "p1"]
    assert game.snapshot == Snapshot(2, "engine-b", b"\x00state two"), "only the latest is kept"
    assert game.first_seq == 2 and game.actions == [(0, {"type": "discard", "card": "10H"})]
    assert game.last_at is not None and abs(game.last_at - time.time()) < 60
    assert await records.game_actions(2) == (await memory.game_actions(2))
    assert await records.game_actions(2, 1) == [
        (None, {"type": "timeout"}),
        (0, {"type": "discard", "card": "10H"}),
    ]
    assert await records.action_count(2) == 3 == await memory.action_count(2)
    assert await records.score_hands(2) == {1} == await memory.score_hands(2)
    assert await records.score_hands(1) == set()
    without = await records.load_room("ROOM02")
    assert without is not None and without[1] is None


@pytest.mark.parametrize("slow", [0.0, 0.05], ids=["quick", "slow_checkpoints"])
async def test_the_write_ahead_log_stays_small_while_appends_never_stop(
    records: DbRecords, monkeypatch: pytest.MonkeyPatch, slow: float
) -> None:
    """Appends that never pause must not grow the log without end: with
    commits landing during every checkpoint, SQLite never started its log
    over, and a busy server's grew 250 MB a minute (bench/soak.py).  Past
    RESTART_PAGES the log is started over while the loop's writes wait.

    The loop goes on committing while the writer thread runs a passive
    checkpoint, so a thread slow to run it (waiting for the CPU, the GIL or
    a flush) let the log grow by whatever the loop wrote meanwhile: 42 to 51
    MB beside a browser test run.  `slow` makes every checkpoint that slow;
    past CHECKPOINT_LAG writes the loop's batches queue behind it.  Here the
    log stays near 2 MB; without the restarts it reaches 187 MB (quick), and
    without the lag bound 52 MB (slow checkpoints)."""
    path = _sqlite_path(records)
    # a checkpoint as soon as the last is back: how much the log gains
    # between two then follows CHECKPOINT_LAG, not the machine's speed
    monkeypatch.setattr(db_records, "CHECKPOINT_EVERY", 0.0)
    monkeypatch.setattr(db_records, "RESTART_PAGES", 64)
    monkeypatch.setattr(db_records, "CHECKPOINT_LAG", 200)
    if slow:
        passive = FastAppends.checkpoint

        def late(self: FastAppends) -> int:
            time.sleep(slow)  # the writer thread's turn comes late
            return passive(self)

        monkeypatch.setattr(FastAppends, "checkpoint", late)
    await records.save_room(room())
    games = [await records.start_game("ABC234", "posso", {}, n, ["p0", "p1"]) for n in range(40)]

    async def play(gid: int) -> None:
        for seq in range(500):
            await records.append_action(gid, seq, 0, {"type": "x", "pad": "y" * 200})

    await asyncio.gather(*(play(g) for g in games))
    wal = os.path.getsize(path + "-wal")
    assert wal < 16 * 2**20, f"the log holds {wal} bytes"


def _log_generation(path: str) -> bytes:
    """The write-ahead log header's checkpoint sequence number and salts
    (bytes 12-23, SQLite's file format, "WAL File Format"): SQLite writes
    them anew each time the log is started over from the top."""
    with open(path + "-wal", "rb") as f:
        return f.read(24)[12:]


async def test_a_reader_that_holds_the_log_delays_its_restart_but_no_write(
    records: DbRecords, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restart waits for readers RESTART_WAIT_MS at most while the loop's
    writes queue behind it; a reader that outlasts every try (a history page
    left open) costs a pause per try, and every append still goes in, in
    order, and the log restarts once the reader is gone.

    The restart runs in the writer thread while appends go on inline, so how
    many appends land before it depends on the machine's speed: the check
    waits for the restart itself (the log's header), not for a size.

    The reader starts while the log holds a commit not yet copied back: a
    reader that starts after everything was copied reads the database file
    alone, and SQLite may then start the log over under it (it does not hold
    the log).  So no checkpoint runs until it has started."""
    path = _sqlite_path(records)
    monkeypatch.setattr(db_records, "CHECKPOINT_EVERY", 3600.0)
    monkeypatch.setattr(db_records, "RESTART_PAGES", 64)
    gid = await _game_with_loop_connection(records)
    while records._checkpointing is not None:  # one started while the game was set up
        await asyncio.sleep(0.005)
    await records.append_action(gid, 1, 0, {"type": "x"})  # in the log, not copied back
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM actions").fetchone()  # holds its snapshot
        monkeypatch.setattr(db_records, "CHECKPOINT_EVERY", 0.01)
        generation = _log_generation(path)
        for seq in range(2, 400):
            await asyncio.wait_for(
                records.append_action(gid, seq, 0, {"type": "x", "pad": "y" * 200}), 10
            )
        assert _log_generation(path) == generation, "the log restarted under a reader"
    finally:
        reader.close()
    seq, deadline = 400, time.monotonic() + 30
    while _log_generation(path) == generation:
        assert time.monotonic() < deadline, "the log never restarted after the reader left"
        await records.append_action(gid, seq, 0, {"type": "x", "pad": "y" * 200})
        seq += 1
        await asyncio.sleep(0.005)  # a room's pace: the writer thread gets its turn
    async with records.sessions() as s:
        logged = (await s.scalars(select(ActionRow.seq).where(ActionRow.game_id == gid))).all()
    assert sorted(logged) == list(range(seq))
