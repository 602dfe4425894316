"""Sampled worlds are true to the view they come from, and to nothing else.

States come from games played by heuristic bots; at many points of each, a
world is sampled for the seat to act and must show that seat exactly the view
it was sampled from, while the cards the seat cannot see are dealt anew.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from app.bots.levels import heuristic_for
from app.bots.worlds import SAMPLERS
from app.games import GAMES

#: (game, seats, options)
CASES = [
    ("possum", 2, {}),
    ("possum", 4, {"multi": True, "multiply": True}),
    ("possum", 6, {}),
    ("bigtwo", 4, {}),
    ("bigtwo", 4, {"pass_locks": True}),
    ("possession", 2, {}),
    ("possession", 3, {}),
    ("possession", 4, {"open_pile": True}),
    ("posso", 2, {"start_hand": 9}),
    ("posso", 4, {"start_hand": 1, "dead_card": True}),
]
#: positions taken from one game (a Posso game is long)
MOST = 60


def positions(game_name: str, seats: int, options: dict[str, Any], seed: int) -> list[Any]:
    """Every 5th state of one heuristic game (the first `MOST` of them), with
    the seat to act there; a Posso cut, when no hand is under way, is skipped."""
    game, bot = GAMES[game_name], heuristic_for(game_name)
    rng = random.Random(seed)
    state = game.new_game(seats, options, seed)
    out = []
    for n in range(5000):
        if game.result(state) is not None or len(out) >= MOST:
            return out
        acting = sorted(game.to_act(state))
        if not acting:
            state, _ = game.apply(state, None, {"type": "timeout"})
            continue
        seat = rng.choice(acting)
        legal = game.legal_actions(state, seat)
        if n % 5 == 0 and game.view(state, seat)["phase"] != "cut":
            out.append((state, seat))
        state, _ = game.apply(state, seat, bot.choose(game.view(state, seat), legal, seat, rng))
    raise AssertionError(f"{game_name} seed {seed} did not end")


@pytest.mark.parametrize(("game_name", "seats", "options"), CASES)
def test_a_world_shows_the_seat_its_own_view(
    game_name: str, seats: int, options: dict[str, Any]
) -> None:
    game, sample = GAMES[game_name], SAMPLERS[game_name]
    for seed in range(3):
        moved = 0
        for state, seat in positions(game_name, seats, options, seed):
            view = game.view(state, seat)
            world = sample(view, seat, random.Random(seed))
            assert game.view(world, seat) == view, f"seed {seed}"
            assert game.legal_actions(world, seat) == game.legal_actions(state, seat)
            assert Counter(game.all_cards(world)) == Counter(game.all_cards(state))
            theirs = [state.hands[s] for s in range(seats) if s != seat]
            moved += theirs != [world.hands[s] for s in range(seats) if s != seat]
        assert moved, f"seed {seed}: no world dealt the hidden cards differently"


def test_big_two_deals_only_unplayed_cards_to_the_other_hands() -> None:
    game = GAMES["bigtwo"]
    for state, seat in positions("bigtwo", 4, {}, 7)[2:]:
        view = game.view(state, seat)
        for w in range(5):
            world = SAMPLERS["bigtwo"](view, seat, random.Random(w))
            assert world.played == state.played
            dealt = {c for s, h in enumerate(world.hands) if s != seat for c in h}
            assert not dealt & set(state.played), "a played card dealt back into a hand"
