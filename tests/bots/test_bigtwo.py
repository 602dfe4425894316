"""The Big Two bot: always legal, finishes games, and plays sensibly in a few
set positions."""

from __future__ import annotations

import random
from typing import Any

from app.bots.base import RandomBot
from app.bots.bigtwo import BigTwoBot, plan_units
from app.games.bigtwo import BIGTWO
from tests.games.bigtwo.positions import position

BOT = BigTwoBot()


def choice(state: Any, seat: int) -> dict[str, Any]:
    legal = BIGTWO.legal_actions(state, seat)
    action = BOT.choose(BIGTWO.view(state, seat), legal, seat, random.Random(0))
    assert action in legal
    return action


def test_bots_only_games_finish_with_legal_moves_and_beat_random_play() -> None:
    wins = 0
    for game in range(12):
        state = BIGTWO.new_game(4, {"pass_locks": game % 2 == 1}, game)
        rng = random.Random(game)
        for _ in range(1000):
            if BIGTWO.is_over(state):
                break
            seat = state.turn
            legal = BIGTWO.legal_actions(state, seat)
            player = BOT if seat in (0, 2) else RandomBot()
            action = player.choose(BIGTWO.view(state, seat), legal, seat, rng)
            assert action in legal
            state, _ = BIGTWO.apply(state, seat, action)
        assert BIGTWO.is_over(state)
        wins += state.places[0] in (0, 2)
    assert wins >= 9  # two bots against two random players win most games


def test_plan_units_counts_the_fewest_combinations() -> None:
    assert plan_units(()) == 0
    assert plan_units(("3C", "3S", "5H")) == 2
    hand = ("3C", "3S", "4C", "4S", "4H", "5D", "6H", "7S", "8C", "9D")
    assert plan_units(hand) == 2  # a full house and a straight


def test_goes_out_when_it_can() -> None:
    state = position(["5C 5S", "9S 10S", "7H JH", "8D QD"], turn=0)
    assert choice(state, 0) == {"type": "play", "cards": ["5C", "5S"]}


def test_follows_with_the_cheapest_card_that_keeps_pairs() -> None:
    state = position(["5C 5S 7H 9D QS KS", "9S 10S", "6H JH", "8D QD"], turn=0, trick=("4C", 3))
    assert choice(state, 0) == {"type": "play", "cards": ["7H"]}


def test_leads_the_unit_holding_its_lowest_card() -> None:
    state = position(["4D 7C 9S JH 2S", "9C 10S", "6H JD", "8D QD"], turn=0)
    assert choice(state, 0) == {"type": "play", "cards": ["4D"]}
    state = position(["4D 4H 9S JH 2S", "9C 10S", "6H JD", "8D QD"], turn=0)
    assert choice(state, 0) == {"type": "play", "cards": ["4H", "4D"]}


def test_passes_early_rather_than_break_a_straight() -> None:
    hand = "3C 3S 4C 4S 4H 5D 6H 7S 8C 9D"
    others = ["10C JC QC KC 2C", "10D JD QD KD 2D", "10H JH QH KH 2H"]
    state = position([hand, *others], turn=0, trick=("7D", 3))
    assert choice(state, 0) == {"type": "pass"}
    # late in the game it breaks the straight instead
    late = position(["5D 6H 7S 8C 9D", "10C JC", "10D", "10H JH"], turn=0, trick=("7D", 3))
    assert choice(late, 0) == {"type": "play", "cards": ["8C"]}


def test_blocks_a_player_about_to_go_out() -> None:
    state = position(["5C 9D KS 2S AH 3D", "9S", "6H JH", "8D QD"], turn=0, trick=("4C", 3))
    assert choice(state, 0) == {"type": "play", "cards": ["2S"]}
