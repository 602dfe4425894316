"""Replays rebuild exactly what was seen, and show each asker only their share."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.db.replay import UNITS, Perspective, ReplayError, chapters, replay
from app.games import GAMES
from app.games.base import Game
from tests.db.tinygame import TINY, engines_on_disk, play

ENGINES = engines_on_disk()


def _ids(case: tuple[Game[Any], int, dict[str, Any]]) -> str:
    return case[0].name


@pytest.fixture(autouse=True)
def _registered(monkeypatch: pytest.MonkeyPatch) -> None:
    for engine, _, _ in ENGINES:
        monkeypatch.setitem(GAMES, engine.name, engine)


@pytest.mark.parametrize("case", ENGINES, ids=_ids)
def test_full_replay_matches_every_view_the_game_showed(
    case: tuple[Game[Any], int, dict[str, Any]],
) -> None:
    engine, seats, options = case
    played = play(engine, seats, options, seed=11)
    steps = replay(engine.name, options, 11, seats, played.actions, Perspective("full"))
    assert len(steps) == len(played.actions) + 1
    for i, step in enumerate(steps):
        want = {k: v for k, v in played.views[i].items() if k != "spectator"}
        assert step["views"] == want, f"{engine.name} step {i} differs"
        # the contract's recipients only: a stray `to` value is never delivered
        assert step["events"] == [e for e in played.events[i] if e["to"] in (None, *range(seats))]
        if i:
            assert (step["seat"], step["action"]) == played.actions[i - 1]


@pytest.mark.parametrize("case", ENGINES, ids=_ids)
def test_spectator_replay_shows_only_the_spectator_view_and_public_events(
    case: tuple[Game[Any], int, dict[str, Any]],
) -> None:
    engine, seats, options = case
    played = play(engine, seats, options, seed=5, max_actions=60)
    steps = replay(engine.name, options, 5, seats, played.actions, Perspective("spectator"))
    for i, step in enumerate(steps):
        assert step["views"] == {"spectator": played.views[i]["spectator"]}
        assert step["events"] == [e for e in played.events[i] if e["to"] is None]


def _quoted_cards(payload: Any) -> set[str]:
    text = json.dumps(payload)
    return {c for c in _every_card() if f'"{c}"' in text}


def _every_card() -> list[str]:
    from app.games.cards import standard_deck

    return [*standard_deck(), "JK"]


def test_seat_replay_of_a_running_game_never_shows_another_hand() -> None:
    played = play(TINY, 3, {}, seed=3, max_actions=4)
    steps = replay("tiny", {}, 3, 3, played.actions, Perspective("seats", frozenset({1})))
    assert len(steps) == 5
    for i, step in enumerate(steps):
        assert set(step["views"]) == {"1"}
        assert step["views"]["1"] == played.views[i]["1"]
        assert all(e["to"] in (None, 1) for e in step["events"])
        others = set(played.views[i]["0"]["hand"]) | set(played.views[i]["2"]["hand"])
        assert not _quoted_cards(step) & others, f"step {i} shows another seat's card"


def test_a_window_of_steps_is_the_same_as_the_whole_replay_sliced() -> None:
    played = play(TINY, 2, {}, seed=9)
    whole = replay("tiny", {}, 9, 2, played.actions, Perspective("full"))
    assert (
        replay("tiny", {}, 9, 2, played.actions, Perspective("full"), start=2, limit=2)
        == whole[2:4]
    )
    assert (
        replay("tiny", {}, 9, 2, played.actions, Perspective("full"), start=0, limit=1) == whole[:1]
    )
    assert replay("tiny", {}, 9, 2, played.actions, Perspective("full"), start=99) == []


def test_a_log_that_no_longer_replays_says_which_action() -> None:
    played = play(TINY, 2, {}, seed=9)
    log = list(played.actions)
    log[2] = (log[2][0], {"type": "play", "card": "XX"})
    with pytest.raises(ReplayError, match="action 2"):
        replay("tiny", {}, 9, 2, log, Perspective("full"))


def test_a_game_without_its_engine_cannot_be_replayed() -> None:
    with pytest.raises(ReplayError, match="no 'gone' engine"):
        replay("gone", {}, 1, 2, [], Perspective("full"))


@pytest.mark.parametrize("case", ENGINES, ids=_ids)
def test_chapters_begin_where_a_hand_trick_or_round_begins(
    case: tuple[Game[Any], int, dict[str, Any]],
) -> None:
    """Each mark is a step the table could see begin: a new Posso hand (the
    view's hand number goes up there), a cleared Big Two trick, or the turn
    passing back round the table; marks climb, and the first is the deal."""
    engine, seats, options = case
    if engine.name == "posso":
        options = {**options, "start_hand": 8}  # three hands, still short
    played = play(engine, seats, options, seed=11)
    found = chapters(engine.name, options, 11, seats, played.actions)
    marks = found["marks"]
    assert found["unit"] == UNITS.get(engine.name, "round")
    assert marks[0]["step"] == 0
    steps = [m["step"] for m in marks]
    assert steps == sorted(set(steps)) and steps[-1] <= len(played.actions)
    assert [m["n"] for m in marks] == list(range(marks[0]["n"], marks[0]["n"] + len(marks)))
    public = [v["spectator"] for v in played.views]
    if engine.name == "posso":
        assert [m["n"] for m in marks] == [8, 9, 10]
        for m in marks:
            assert public[m["step"]]["hand_no"] == m["n"]
            assert m["step"] == 0 or public[m["step"] - 1]["hand_no"] == m["n"] - 1
    elif engine.name == "bigtwo":
        assert len(marks) > 3
        cleared = [
            k for k, evs in enumerate(played.events) if any(e["type"] == "control" for e in evs)
        ]
        assert steps[1:] == [k for k in cleared if not public[k]["over"]]
        for m in marks:
            assert public[m["step"]]["control"] and public[m["step"]]["trick"] is None
    elif engine.name != "tiny":
        assert len(marks) > 2
        opener = min(public[0]["to_act"])

        def place(seat: int) -> int:  # where a seat sits in the round
            return (seat - opener) % seats

        for k in range(1, len(played.actions) + 1):
            actor, nxt = played.actions[k - 1][0], public[k]["to_act"]
            if public[k]["over"] or len(nxt) != 1 or nxt[0] == actor:
                assert k not in steps  # the same turn goes on (or the game ended)
                continue
            # the turn went back round the table exactly where a mark is
            assert (place(nxt[0]) <= place(actor)) == (k in steps), k


def test_chapters_of_a_log_that_no_longer_replays_say_which_action() -> None:
    with pytest.raises(ReplayError, match="action 0"):
        chapters("tiny", {}, 3, 2, [(0, {"type": "nonsense"})])
