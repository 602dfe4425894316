"""The evening's table (app/db/standings.py `evening`): each person and each
bot seat once - a bot removed and another added in its seat, both "Bot 3",
are two rows with two names - ranked by what the evening's games say (wins,
then the average place), whatever the Big Two series says."""

from __future__ import annotations

import itertools
from typing import Any

from sqlalchemy import select

from app.db import standings
from app.db.models import Room
from app.db.records import DbRecords
from app.store.records import PlayerRecord, RoomRecord
from tests.db.tinygame import TINY, Played, play


async def store_game(records: DbRecords, room: RoomRecord, seats: list[str], game: Played) -> None:
    await records.save_room(room)
    gid = await records.start_game(room.code, game.game, game.options, game.seed, seats)
    for seq, (seat, action) in enumerate(game.actions):
        await records.append_action(gid, seq, seat, action)
    assert game.result is not None
    await records.finish_game(gid, game.result)


async def test_a_replaced_bot_is_its_own_row_and_the_table_ranks_by_the_games(
    records: DbRecords,
) -> None:
    ann = PlayerRecord("p0", "Ann", "h0", 0, guest_id="guest-a" * 6)
    bob = PlayerRecord("p1", "Bob", "h1", 1, guest_id="guest-b" * 6)
    first_bot = PlayerRecord("b1", "Bot 3", "", 2, is_bot=True)
    games = [play(TINY, 3, {}, seed=s) for s in (3, 4, 5)]
    room = RoomRecord("EVE001", TINY.name, games[0].options, {}, "p0", [ann, bob, first_bot])
    await store_game(records, room, ["p0", "p1", "b1"], games[0])
    # the host removes the bot and adds another: it is named "Bot 3" too
    second_bot = PlayerRecord("b2", "Bot 3", "", 2, is_bot=True)
    room.players = [ann, bob, second_bot]
    for g in games[1:]:
        await store_game(records, room, ["p0", "p1", "b2"], g)
    async with records.sessions() as s:
        room_id = await s.scalar(select(Room.id).where(Room.code == "EVE001"))
        assert room_id is not None
        night = await standings.evening(s, room_id)
    league: list[dict[str, Any]] = night["league"]
    names = [row["name"] for row in league]
    assert sorted(names) == ["Ann", "Bob", "Bot 3", "Bot 3 (2)"], names
    by_id = {row["player"]: row for row in league}
    assert by_id["b1"]["name"] == "Bot 3" and by_id["b2"]["name"] == "Bot 3 (2)"
    assert by_id["b1"]["played"] == 1 and by_id["b2"]["played"] == 2
    # the games list names them as the table does
    assert {line["name"] for g in night["games"] for line in g["seats"]} == set(names)
    # ranked by wins, then the better average place
    wins = [row["won"] for row in league]
    assert wins == sorted(wins, reverse=True)
    for a, b in itertools.pairwise(league):
        if a["won"] == b["won"]:
            assert a["mean_place"] <= b["mean_place"]
    for row in league:
        places = {int(k): n for k, n in row["places"].items()}
        assert row["mean_place"] == round(sum(p * n for p, n in places.items()) / row["played"], 2)
