"""The strong bot: fair by construction, replayable, never slower than its cap."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.bots.levels import bot_for, heuristic_for
from app.bots.search import SearchBot, evident_best, search_bot
from app.bots.worlds import SAMPLERS
from app.games import GAMES
from tests.bots.test_worlds import positions

GAMES_WITH_SEARCH = [
    ("possum", 4, {}),
    ("bigtwo", 4, {}),
    ("possession", 2, {}),
    ("posso", 4, {}),
    ("posso", 2, {"start_hand": 9}),
]


def decisions(game_name: str, seats: int, options: dict[str, Any], seed: int) -> list[Any]:
    """States where the heuristic's move is not the only candidate."""
    game = GAMES[game_name]
    bot = search_bot(game_name, heuristic_for(game_name), 8)
    assert isinstance(bot, SearchBot)
    out = []
    for state, seat in positions(game_name, seats, options, seed):
        view, legal = game.view(state, seat), game.legal_actions(state, seat)
        chosen = bot.heuristic.choose(view, legal, seat, random.Random(0))
        if len(bot.shortlist(view, legal, seat, chosen)) > 1:
            out.append((state, seat))
    return out


@pytest.mark.parametrize(("game_name", "seats", "options"), GAMES_WITH_SEARCH)
def test_same_view_over_other_hidden_cards_gives_the_same_choice(
    game_name: str, seats: int, options: dict[str, Any]
) -> None:
    """The hidden cards are dealt anew (a world sampled from the seat's view is
    a real state with the same view and other hidden cards); the strong bot,
    given the same seed, chooses the same, so nothing hidden reaches it."""
    game = GAMES[game_name]
    bot = search_bot(game_name, heuristic_for(game_name), 16)
    assert isinstance(bot, SearchBot)
    bot.wall_cap = float("inf")  # a loaded test machine must not cut a search short
    seed = 5
    checked = 0
    for state, seat in decisions(game_name, seats, options, seed)[:6]:
        view = game.view(state, seat)
        other = SAMPLERS[game_name](view, seat, random.Random(99))
        hidden = [s for s in range(seats) if s != seat]
        assert [state.hands[s] for s in hidden] != [other.hands[s] for s in hidden]
        assert game.view(other, seat) == view
        first = bot.choose(view, game.legal_actions(state, seat), seat, random.Random(seed))
        again = bot.choose(
            game.view(other, seat), game.legal_actions(other, seat), seat, random.Random(seed)
        )
        assert first == again, f"seed {seed}"
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize(("game_name", "seats", "options"), GAMES_WITH_SEARCH)
def test_same_seed_same_choice_and_always_legal(
    game_name: str, seats: int, options: dict[str, Any]
) -> None:
    game = GAMES[game_name]
    bot = search_bot(game_name, heuristic_for(game_name), 12)
    assert isinstance(bot, SearchBot)
    bot.wall_cap = float("inf")
    for state, seat in decisions(game_name, seats, options, 2)[:5]:
        view, legal = game.view(state, seat), game.legal_actions(state, seat)
        first = bot.choose(view, legal, seat, random.Random(1))
        assert first in legal
        assert bot.choose(view, legal, seat, random.Random(1)) == first


def test_past_the_wall_cap_it_plays_the_heuristic_move() -> None:
    game_name = "bigtwo"
    game = GAMES[game_name]
    bot = search_bot(game_name, heuristic_for(game_name), 10_000)
    assert isinstance(bot, SearchBot)
    bot.wall_cap = 0.0
    for state, seat in decisions(game_name, 4, {}, 3)[:4]:
        view, legal = game.view(state, seat), game.legal_actions(state, seat)
        expected = bot.heuristic.choose(view, legal, seat, random.Random(4))
        assert bot.choose(view, legal, seat, random.Random(4)) == expected


def test_the_heuristic_move_stands_unless_another_is_evidently_better() -> None:
    # index 0 is the heuristic's move; values are per world
    assert evident_best([[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]], 1.0) == 0
    assert evident_best([[0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]], 1.0) == 1
    assert evident_best([[0.5, 0.5], [0.5, 0.5], [0.6, 0.7]], 1.0) == 2
    assert evident_best([[0.5, 0.5], [0.4, 0.4]], 1.0) == 0


@pytest.mark.parametrize(("game_name", "seats", "options"), GAMES_WITH_SEARCH)
def test_a_strong_seat_finishes_games(game_name: str, seats: int, options: dict[str, Any]) -> None:
    game = GAMES[game_name]
    strong = search_bot(game_name, heuristic_for(game_name), 4)
    assert strong is not None
    normal = bot_for(game_name)
    seed = 11
    rng = random.Random(seed)
    if game_name == "posso":
        options = {**options, "start_hand": 9}  # the last two hands: long enough

    def over(state: Any) -> bool:
        # Posso: the first hand's end will do
        return game.result(state) is not None or getattr(state, "hand_no", 9) > 9

    state = game.new_game(seats, options, seed)
    for _ in range(5000):
        if over(state):
            break
        if not game.to_act(state):
            state, _ = game.apply(state, None, {"type": "timeout"})
            continue
        seat = min(game.to_act(state))
        legal = game.legal_actions(state, seat)
        bot = strong if seat == 0 else normal
        action = bot.choose(game.view(state, seat), legal, seat, rng)
        assert action in legal, f"seed {seed}"
        state, _ = game.apply(state, seat, action)
    assert over(state), f"seed {seed}"
