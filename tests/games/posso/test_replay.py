"""Old logs replay exactly.  The log is the record of a game (recovery and
"My games" replay it from the seed), so a rule the engine adds later must
never change what an old log turns into.

logs/hand1_cut_log.json was written by the engine before moot cuts were
passed over: the dealer cut by hand in hand 1, where every total is 0 (a cut
that is moot now), and again in hand 2.  Its score sheet and the spectator's
view at its end are stored as that engine made them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.games.posso import POSSO

LOG = Path(__file__).parent / "logs" / "hand1_cut_log.json"


def test_a_log_with_a_hand_one_cut_replays_to_the_same_sheet_and_view() -> None:
    old: dict[str, Any] = json.loads(LOG.read_text())
    state = POSSO.new_game(old["seats"], old["options"], old["seed"])
    first_seat, first = old["actions"][0]
    assert first["type"] == "cut" and state.hand_no == 1
    assert POSSO.timer(state) == "cut_moot"  # moot now, yet the dealer's cut stands
    for seat, action in old["actions"]:
        state, _ = POSSO.apply(state, seat, action)
    assert state.sheet == old["sheet"]
    assert state.sheet[0]["cut"]["at"] == first["at"] and state.sheet[0]["cut"]["hit"]
    assert POSSO.view(state, None) == old["spectator_view"]
    assert first_seat == old["sheet"][0]["dealer"]
