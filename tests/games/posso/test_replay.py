"""Old logs replay exactly.  The log is the record of a game (recovery and
"My games" replay it from the seed), so a rule the engine adds later must
never change what an old log turns into.

logs/hand1_cut_log.json was written by the engine before moot cuts were
passed over: the dealer cut by hand in hand 1, where every total is 0 (a cut
that is moot now), and again in hand 2.  Its score sheet and the spectator's
view at its end are stored as that engine made them.

logs/rules<N>_*.json are whole games (hands eight to ten, cutting to win)
played by bots under each version of the rules (docs/games/posso.md, "Rules
versions"), with the result and sheet their engine stored: rules1 by the
engine before the cut's jitter grew with the deck, its options naming no
version, as such games are stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.games.posso import POSSO

LOGS = Path(__file__).parent / "logs"
LOG = LOGS / "hand1_cut_log.json"


def test_a_log_with_a_hand_one_cut_replays_to_the_same_sheet_and_view() -> None:
    old: dict[str, Any] = json.loads(LOG.read_text())
    state = POSSO.new_game(old["seats"], POSSO.stored_options(old["options"]), old["seed"])
    first_seat, first = old["actions"][0]
    assert first["type"] == "cut" and state.hand_no == 1
    assert POSSO.timer(state) == "cut_moot"  # moot now, yet the dealer's cut stands
    for seat, action in old["actions"]:
        state, _ = POSSO.apply(state, seat, action)
    assert state.sheet == old["sheet"]
    assert state.sheet[0]["cut"]["at"] == first["at"] and state.sheet[0]["cut"]["hit"]
    assert POSSO.view(state, None) == old["spectator_view"]
    assert first_seat == old["sheet"][0]["dealer"]


def replay(log: dict[str, Any], options: dict[str, Any]) -> Any:
    state = POSSO.new_game(log["seats"], options, log["seed"])
    for seat, action in log["actions"]:
        state, _ = POSSO.apply(state, seat, action)
    return state


@pytest.mark.parametrize("path", sorted(LOGS.glob("rules*.json")), ids=lambda p: p.stem)
def test_a_stored_game_of_every_rules_version_replays_to_its_stored_result(path: Path) -> None:
    stored: dict[str, Any] = json.loads(path.read_text())
    state = replay(stored, POSSO.stored_options(stored["options"]))
    assert POSSO.result(state) == stored["result"]
    assert state.sheet == stored["sheet"]


def test_the_first_rules_logs_name_no_version_and_would_not_replay_under_the_second() -> None:
    """The version is what keeps an old game as it was: the same log under
    today's rules lands its cuts elsewhere."""
    stored: dict[str, Any] = json.loads((LOGS / "rules1_to_win.json").read_text())
    assert "rules" not in stored["options"]
    today = replay(stored, {**stored["options"], "rules": 2})
    assert today.sheet != stored["sheet"]
