"""Records among friends over the real routes, from games real rooms played,
on SQLite and PostgreSQL: a person's records, head-to-head, rivals, a room's
evening, and the exports (CSV, the full record, a replay of it)."""

from __future__ import annotations

import csv
import io
import random
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.api import records as records_api
from app.games import GAMES
from tests.api.evenings import Evening, evening, play_games
from tests.db import backends

backend_url = backends.backend_url
db_url = backends.db_url
pg_url = backends.pg_url
sqlite_template = backends.sqlite_template

pytestmark = pytest.mark.timeout(300)
SEED = 30


@pytest.fixture(scope="module")
def _games_registered() -> None:
    for name in ("bigtwo", "posso"):
        if name not in GAMES:
            pytest.skip(f"the {name} engine is not registered")


@pytest.fixture(scope="module", params=backends.BACKENDS)
def night_db(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    sqlite_template: Path,
) -> Iterator[str]:
    """A database of the module's own: the evening below is played once per
    backend, and the tests that only read it share it."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("night") / "cardroom.db"
        shutil.copyfile(sqlite_template, path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    with backends.fresh_pg_database() as url:
        yield url


@pytest.fixture(scope="module")
def night(night_db: str, _games_registered: None) -> Iterator[tuple[Evening, dict[str, Any]]]:
    """Ann hosts three Big Two games with Bob and Cat (and a bot), then one
    Posso game with Bob (and a bot).  Dan plays elsewhere, alone with bots.
    Read only: the test that changes who is who plays its own evening."""
    rng = random.Random(SEED)
    with evening(night_db, SEED) as ev:
        big, token = ev.open_room("bigtwo", "Ann", ["Bob", "Cat"])
        with ev.host(big, token) as ann:
            bigtwo = play_games(ann, 3, rng)
        posso, token = ev.open_room(
            "posso", "Ann", ["Bob"], start_hand=9, cutting="off", first_dealer=0
        )
        with ev.host(posso, token) as ann:
            sheet_game = play_games(ann, 1, rng, bots=1)
        alone, token = ev.open_room("bigtwo", "Dan", [])
        with ev.host(alone, token) as dan:
            play_games(dan, 1, rng)
        # newest first: the games in the order played, each named as its
        # room's view named it
        ids = [g["id"] for g in ev.get("Ann", "/api/me/games").json()["games"]][::-1]
        for final, gid in zip(bigtwo + sheet_game, ids, strict=True):
            assert final["room"]["game_id"] == gid
            final["game_id"] = gid
        yield ev, {"bigtwo": bigtwo, "posso": sheet_game, "rooms": (big, posso, alone)}


def _places(final: dict[str, Any]) -> dict[int, int]:
    return {s: i + 1 for i, group in enumerate(final["game"]["result"]["places"]) for s in group}


def test_a_persons_records_count_every_game_they_finished(
    night: tuple[Evening, dict[str, Any]],
) -> None:
    ev, played = night
    ann = ev.person("Ann")
    got = ev.get("Ann", f"/api/people/{ann.id}")
    assert got.status_code == 200, got.text
    rec = got.json()
    assert rec["me"] is True and rec["name"] == "Ann" and rec["kind"] == "guest"
    assert ev.person("Ann").guest not in got.text  # the cookie secret never shows
    per_game = {g["game"]: g for g in rec["games"]}
    big_places = Counter(_places(f)[0] for f in played["bigtwo"])
    assert per_game["bigtwo"]["played"] == 3
    assert per_game["bigtwo"]["places"] == {str(p): n for p, n in big_places.items()}
    assert per_game["bigtwo"]["won"] == big_places[1]
    final = played["posso"][0]
    assert per_game["posso"]["played"] == 1
    assert per_game["posso"]["won"] == int(_places(final)[0] == 1)
    assert rec["played"] == 4
    sheet = ev.get("Ann", f"/api/history/games/{final['game_id']}/sheet").json()
    mine = [ln for hand in sheet["hands"] for ln in hand["lines"] if ln["seat"] == 0]
    total = final["game"]["result"]["scores"][0]
    assert rec["posso"] == {
        "games": 1,
        "best": total,
        "average": float(total),
        "hands_won": sum(ln["went_out"] for ln in mine),
        "possos": sum(ln["possos"] or 0 for ln in mine),
    }
    tally = {t["player"]: t["points"] for t in played["bigtwo"][-1]["room"]["tally"]}
    ann_pid = played["bigtwo"][-1]["room"]["seats"][0]["player"]
    assert rec["bigtwo"] == {
        "series": 1,
        "series_won": int(tally[ann_pid] == max(tally.values())),
    }
    assert [g["id"] for g in rec["recent"]] == [
        f["game_id"] for f in reversed(played["bigtwo"] + played["posso"])
    ]


def test_records_are_for_the_person_and_those_who_played_with_them(
    night: tuple[Evening, dict[str, Any]],
) -> None:
    ev, _ = night
    ann, dan = ev.person("Ann"), ev.person("Dan")
    assert ev.get("Bob", f"/api/people/{ann.id}").status_code == 200
    refused = ev.get("Dan", f"/api/people/{ann.id}")
    assert refused.status_code == 403 and "finished a game with them" in refused.text
    assert ev.get("Ann", f"/api/people/{dan.id}").status_code == 403
    # an unknown person looks exactly like a private one
    unknown = ev.get("Ann", "/api/people/g" + "0" * 24)
    assert unknown.status_code == 403
    assert ev.get("Ann", "/api/people/not-a-person").status_code == 422
    me = ev.get("Dan", "/api/me/person").json()
    assert me["person"] == dan.id and "Sign in" in me["note"]


def test_head_to_head_and_rivals(night: tuple[Evening, dict[str, Any]]) -> None:
    ev, played = night
    ann, bob, cat = ev.person("Ann"), ev.person("Bob"), ev.person("Cat")
    got = ev.get("Cat", f"/api/people/{ann.id}/versus/{bob.id}")
    assert got.status_code == 200, got.text
    h2h = got.json()
    assert [p["name"] for p in h2h["people"]] == ["Ann", "Bob"]
    per_game = {g["game"]: g for g in h2h["games"]}
    finals = played["bigtwo"]
    assert per_game["bigtwo"]["together"] == 3
    ann_higher = sum(_places(f)[0] < _places(f)[1] for f in finals)
    assert per_game["bigtwo"]["first_higher"] == ann_higher
    assert per_game["bigtwo"]["second_higher"] == 3 - ann_higher
    posso = played["posso"][0]["game"]["result"]["scores"]
    assert per_game["posso"]["together"] == 1
    assert [side["best"] for side in h2h["posso"]] == [posso[0], posso[1]]
    assert h2h["together"] == 4 and len(h2h["recent"]) == 4
    # Cat played fewer games than Ann: the latest shared games are found from
    # Cat's side, and still reported from Ann's
    with_cat = ev.get("Bob", f"/api/people/{ann.id}/versus/{cat.id}").json()
    assert [g["places"] for g in with_cat["recent"]] == [
        [_places(f)[0], _places(f)[2]] for f in reversed(finals)
    ]
    # Cat shared only the Big Two games with Bob: Cat may look, Dan may not
    assert ev.get("Dan", f"/api/people/{ann.id}/versus/{bob.id}").status_code == 403
    assert ev.get("Ann", f"/api/people/{ann.id}/versus/{ann.id}").status_code == 400
    rivals = ev.get("Ann", f"/api/people/{ann.id}/rivals").json()["rivals"]
    assert [(r["name"], r["together"]) for r in rivals] == [("Bob", 4), ("Cat", 3)]
    assert all(r["person"] != ann.id for r in rivals)  # nor any bot: they are nobody
    assert rivals[1]["person"] == cat.id


def test_a_rooms_evening_lists_its_games_in_order_with_a_league(
    night: tuple[Evening, dict[str, Any]],
) -> None:
    ev, played = night
    big = played["rooms"][0]
    got = ev.get("Cat", f"/api/history/rooms/{big}/evening")
    assert got.status_code == 200, got.text
    typed = f"{big.lower()[:4]}-{big.lower()[4:8]} {big.lower()[8:]}"
    assert ev.get("Cat", f"/api/history/rooms/{typed}/evening").json() == got.json()
    body = got.json()
    assert [g["id"] for g in body["games"]] == [f["game_id"] for f in played["bigtwo"]]
    for g, final in zip(body["games"], played["bigtwo"], strict=True):
        assert g["status"] == "finished"
        assert {s["seat"]: s["place"] for s in g["seats"]} == _places(final)
    tally = {t["player"]: t["points"] for t in played["bigtwo"][-1]["room"]["tally"]}
    league = body["league"]
    assert {row["player"]: row["tally"] for row in league} == tally
    # ranked by what the games say: wins, then the better average place
    assert [row["won"] for row in league] == sorted((r["won"] for r in league), reverse=True)
    assert all(row["played"] == 3 for row in league)
    people = {row["name"]: row["person"] for row in league}
    assert people["Cat"] == ev.person("Cat").id and people["Ann"] == ev.person("Ann").id
    assert sum(row["won"] for row in league) == 3
    # one answer for a room Dan was not in and a room that does not exist
    assert ev.get("Dan", f"/api/history/rooms/{big}/evening").status_code == 404
    assert ev.get("Dan", f"/api/history/rooms/{big.lower()}-X/evening").status_code == 404


def test_a_score_sheets_csv_reads_back_as_the_sheet(
    night: tuple[Evening, dict[str, Any]],
) -> None:
    ev, played = night
    gid = played["posso"][0]["game_id"]
    sheet = ev.get("Bob", f"/api/history/games/{gid}/sheet").json()
    got = ev.get("Bob", f"/api/history/games/{gid}/sheet.csv")
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/csv")
    assert "attachment" in got.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(got.text)))
    head, lines = rows[0], rows[1:]
    names = [s["name"] for s in sheet["seats"]]
    assert head[:5] == ["hand", "dealer", "requirement", "went_out", "cut"]
    assert head[5:] == [
        f"{n} (seat {i + 1}) {part}"
        for i, n in enumerate(names)
        for part in ("points", "total", "possos")
    ]
    assert len(lines) == len(sheet["hands"]) == 2
    for line, hand in zip(lines, sheet["hands"], strict=True):
        assert int(line[0]) == hand["hand"]
        assert line[1] == names[hand["dealer"]]
        # in words, as the sheet says them, never raw JSON
        assert line[2] == hand["requirement"]["text"]
        assert not line[4].startswith(("{", "[")), line[4]
        assert line[4] == "" if hand["cut"] is None else line[4].startswith(names[hand["dealer"]])
        assert line[3] == ("" if hand["went_out"] is None else names[hand["went_out"]])
        for i, ln in enumerate(hand["lines"]):
            cells = line[5 + 3 * i : 8 + 3 * i]
            assert cells == [
                "" if v is None else str(v) for v in (ln["points"], ln["total"], ln["possos"])
            ]
    assert ev.get("Dan", f"/api/history/games/{gid}/sheet.csv").status_code == 403


def test_a_persons_games_csv_has_a_line_per_finished_game(
    night: tuple[Evening, dict[str, Any]],
) -> None:
    ev, played = night
    ann = ev.person("Ann")
    got = ev.get("Bob", f"/api/people/{ann.id}/games.csv")
    assert got.status_code == 200, got.text
    rows = list(csv.DictReader(io.StringIO(got.text)))
    finals = {f["game_id"]: f for f in played["bigtwo"] + played["posso"]}
    assert sorted(r["game_id"] for r in rows) == sorted(finals)
    for r in rows:
        final = finals[r["game_id"]]
        assert int(r["place"]) == _places(final)[0] and r["seat"] == "1"
        assert int(r["score"]) == final["game"]["result"]["scores"][0]
        assert r["players"].split(" / ")[:2] == ["Ann", "Bob"]


def test_a_finished_games_record_is_for_its_full_replay_and_replays_back(
    night: tuple[Evening, dict[str, Any]],
) -> None:
    ev, played = night
    gid = played["posso"][0]["game_id"]
    got = ev.get("Bob", f"/api/history/games/{gid}/record")
    assert got.status_code == 200, got.text
    record = got.json()
    assert record["game"] == "posso" and record["options"]["start_hand"] == 9
    assert record["seed"].isdigit() and record["actions"]
    assert record["result"] == played["posso"][0]["game"]["result"]
    # a stranger, and a watcher of the room, are refused the seed
    assert ev.get("Dan", f"/api/history/games/{gid}/record").status_code == 403
    stored = ev.get("Bob", f"/api/history/games/{gid}/replay", start=0, limit=2000).json()
    loaded = ev.as_("Dan").post("/api/replay", params={"limit": 2000}, json=record)
    assert loaded.status_code == 200, loaded.text
    body = loaded.json()
    assert body["total_steps"] == stored["total_steps"] == len(record["actions"]) + 1
    assert body["steps"][-1]["views"] == stored["steps"][-1]["views"]
    # hands 9 and 10, the same marks as the stored game's
    assert body["chapters"] == stored["chapters"]
    assert [m["n"] for m in body["chapters"]["marks"]] == [9, 10]
    broken = dict(record, actions=[*record["actions"][:3], [0, {"type": "fly"}]])
    refused = ev.client.post("/api/replay", json=broken)
    assert refused.status_code == 409 and refused.json()["detail"]["code"] == "replay_broken"
    assert ev.client.post("/api/replay", json={"game": "posso"}).status_code == 422


def test_signing_up_takes_a_guests_records_along(db_url: str, _games_registered: None) -> None:
    rng = random.Random(SEED)
    with evening(db_url, SEED) as ev:
        code, token = ev.open_room("bigtwo", "Ann", ["Bob"])
        with ev.host(code, token) as ann:
            play_games(ann, 3, rng)
        bob = ev.person("Bob")
        made = ev.as_("Bob").post(
            "/api/accounts/signup", json={"name": "Bobby", "password": "a long enough secret"}
        )
        assert made.status_code == 201, made.text
        now = ev.get("Bob", "/api/me/person").json()
        assert now["person"].startswith("a") and now["signed_in"]
        rec = ev.get("Bob", f"/api/people/{now['person']}").json()
        assert rec["played"] == 3 and rec["name"] == "Bobby"
        # the guest's id holds nothing any more: nobody has played with it
        assert ev.get("Ann", f"/api/people/{bob.id}").status_code == 403
        rivals = ev.get("Ann", f"/api/people/{ev.person('Ann').id}/rivals").json()["rivals"]
        assert [r["person"] for r in rivals] == [now["person"]]


def test_a_name_that_looks_like_a_formula_stays_text_in_a_csv() -> None:
    assert records_api._text("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert records_api._text("@Ann") == "'@Ann" and records_api._text("Ann") == "Ann"


def test_a_cut_on_the_csv_is_in_the_sheets_words() -> None:
    hit = {"count": 48, "target": 48, "hit": True, "effect": {"before": 120, "after": 0}}
    assert records_api._cut_words(hit, "Ann") == "Ann cut 48 (needed 48 or 49): a hit, 120 -> 0"
    miss = {"count": 30, "target": 48, "hit": False, "effect": None}
    assert records_api._cut_words(miss, "Ann") == "Ann cut 30 (needed 48 or 49): a miss"
    assert (
        records_api._cut_words({"count": None, "target": 48}, "Ann")
        == "Ann did not cut in time: a miss"
    )
    assert records_api._cut_words({"count": None, "moot": True}, "Ann").startswith("no cut")
    assert records_api._cut_words(None, "Ann") == ""
