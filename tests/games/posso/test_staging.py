"""The melds a player may stage are the engine's to say (app/games/posso/staging.py):
picked cards match one of the listed groups exactly when the engine would lay
them as a meld of that kind in this hand.  Checked against `new_meld` and the
hand's sizes over many random hands and picks, both ways."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from app.games.cards import build_deck
from app.games.posso import POSSO
from app.games.posso.rules import RUN, SET
from app.games.posso.staging import meld_options
from tests.games.posso.helpers import act, close_window, game
from tests.games.posso.oracle import layable, meld_picks

H0 = ["3H", "3C", "3D", "5H", "5S", "2C", "9H"]
H1 = ["4H", "4C", "4D", "6H", "6S", "JK", "2S"]
H2 = ["7H", "7C", "7D", "8H", "8S", "8C", "JH"]


def matches(options: dict[str, Any], kind: str, picked: list[str]) -> bool:
    """What the table does with the listed groups (static/js/tables/posso-melds.js)."""
    wild = [c for c in picked if c in options["wilds"]]
    nat = Counter(c for c in picked if c not in options["wilds"])
    return any(
        m["kind"] == kind
        and not nat - Counter(m["cards"])
        and [nat.total(), len(wild)] in m["counts"]
        for m in options["melds"]
    )


@pytest.mark.parametrize("seed", range(30))
def test_the_listed_groups_match_exactly_the_melds_the_engine_lays(seed: int) -> None:
    rng = random.Random(seed)
    deck = build_deck(2, jokers_per_deck=2)
    valid = 0
    for _ in range(8):
        hand_no = rng.randint(1, 10)
        hand = rng.sample(deck, 7 + hand_no + rng.randint(0, 4))
        options = meld_options(hand, hand_no)
        for picked in meld_picks(rng, hand, hand_no):
            for kind in (SET, RUN):
                want = layable(kind, picked, hand_no)
                assert matches(options, kind, picked) == want, (
                    f"seed {seed}, hand {hand_no}: {kind} of {picked} from {sorted(hand)} "
                    f"should {'' if want else 'not '}be offered"
                )
                valid += want
    assert valid >= 20, f"seed {seed}: only {valid} valid melds were tried"


def test_the_reported_pick_is_no_set_and_a_real_set_is() -> None:
    hand = ["3C", "5C", "9H", "9D", "KS", "QH", "4D", "6S", "2C"]
    options = meld_options(hand, 1)
    assert not matches(options, SET, ["3C", "5C"])
    assert not matches(options, SET, ["9H", "9D"])  # a set of 2: hand 1's sets have 3
    assert matches(options, SET, ["9H", "9D", "2C"])
    assert not matches(options, RUN, ["3C", "4D", "5C"])  # hand 1 lays no runs
    assert [m for m in options["melds"] if m["kind"] == RUN] == []
    two = meld_options(hand, 2)
    assert not matches(two, RUN, ["3C", "5C", "2C"])  # three cards; hand 2's run has 4
    assert matches(meld_options([*hand, "6C"], 2), RUN, ["3C", "5C", "6C", "2C"])


def test_only_the_seat_arranging_its_go_down_is_told_its_melds() -> None:
    s = close_window(game(3, [H0, H1, H2], "QS", ["4S"]))
    assert all(POSSO.view(s, seat)["meld_options"] is None for seat in range(3))
    s, _ = act(s, 1, type="draw", source="stack")
    mine = POSSO.view(s, 1)["meld_options"]
    assert mine == meld_options(s.hands[1], 1)
    assert matches(mine, SET, ["4H", "4C", "4D"]) and matches(mine, SET, ["6H", "6S", "JK"])
    assert POSSO.view(s, 0)["meld_options"] is None and "meld_options" not in POSSO.view(s, None)
    sets = [
        {"kind": "set", "cards": ["4H", "4C", "4D"]},
        {"kind": "set", "cards": ["6H", "6S", "JK"]},
    ]
    s, _ = act(s, 1, type="go_down", melds=sets)
    assert POSSO.view(s, 1)["meld_options"] is None  # down: nothing more to arrange
