"""The Possum bot: always legal, finishes games, sheds the most cards and
leaves a hard top."""

from __future__ import annotations

import random
from typing import Any

from app.bots.base import RandomBot
from app.bots.possum import PossumBot, answers
from app.games.possum import POSSUM
from tests.games.possum.positions import position

BOT = PossumBot()


def choice(state: Any, seat: int = 0) -> dict[str, Any]:
    legal = POSSUM.legal_actions(state, seat)
    action = BOT.choose(POSSUM.view(state, seat), legal, seat, random.Random(0))
    assert action in legal
    return action


def test_bots_only_games_finish_with_legal_moves() -> None:
    wins = games = 0
    for game in range(24):
        seats = 2 + game % 5
        options = {"multi": game % 2 == 0, "multiply": game % 3 == 0}
        state = POSSUM.new_game(seats, options, game)
        rng = random.Random(game)
        for _ in range(5000):
            if POSSUM.is_over(state):
                break
            seat = state.turn
            legal = POSSUM.legal_actions(state, seat)
            player = BOT if seat == 0 else RandomBot()
            action = player.choose(POSSUM.view(state, seat), legal, seat, rng)
            assert action in legal
            state, _ = POSSUM.apply(state, seat, action)
        assert POSSUM.is_over(state)
        games += 1
        wins += state.winner == 0
    assert wins > games / 4  # one bot among 2-6 random players wins well above its share


def test_draws_only_when_it_must() -> None:
    state = position(["2S 4S", "3D"], pile="AC", draw="9H")
    assert choice(state) == {"type": "draw"}


def test_sheds_the_most_cards() -> None:
    state = position(["5C 5D 5H 2S 3S", "3D"], pile="5S", draw="9H", multi=True)
    assert sorted(choice(state)["cards"]) == ["5C", "5D", "5H"]


def test_leaves_the_harder_top() -> None:
    assert answers(13, False, False, False) < answers(1, False, False, False)
    state = position(["4C 5D QS", "3D"], pile="9S", draw="9H")
    assert choice(state) == {"type": "play", "cards": ["4C", "5D"]}
    state = position(["4C 5D KS", "3D"], pile="9S", draw="9H")
    assert choice(state) == {"type": "play", "cards": ["4C", "KS"]}  # 4 + 9 = K, K on top
    state = position(["AC 3D 4H", "3D"], pile="3S", draw="9H")
    # A + 3 = 4: leave the 4 on top rather than the ace, or the single 3
    assert choice(state) == {"type": "play", "cards": ["AC", "4H"]}
