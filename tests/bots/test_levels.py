"""Which bot a level gives, and the easy bot's slips."""

from __future__ import annotations

import random

import pytest

from app.bots import BOTS, RandomBot, bot_for
from app.bots.levels import EasyBot
from app.bots.search import HEURISTIC_IS_STRONGER, SearchBot
from app.games import GAMES


def test_levels_give_the_bots_they_name() -> None:
    for name in GAMES:
        assert bot_for(name) is BOTS[name]
        assert bot_for(name, "normal") is BOTS[name]
        assert isinstance(bot_for(name, "easy"), EasyBot)
        assert isinstance(bot_for(name, "random"), RandomBot)
        strong = bot_for(name, "strong", playouts=7)
        if name in HEURISTIC_IS_STRONGER:
            assert strong is BOTS[name]
        else:
            assert isinstance(strong, SearchBot)
            assert strong.playouts == 7
    assert isinstance(bot_for("no such game", "strong"), RandomBot)
    with pytest.raises(ValueError, match="unknown bot level"):
        bot_for("possum", "grandmaster")


def test_the_easy_bot_slips_about_as_often_as_it_says() -> None:
    game = GAMES["bigtwo"]
    state = game.new_game(4, {}, 3)
    seat = min(game.to_act(state))
    view, legal = game.view(state, seat), game.legal_actions(state, seat)
    normal = BOTS["bigtwo"].choose(view, legal, seat, random.Random(0))
    easy = EasyBot(BOTS["bigtwo"], slip=0.5)
    rng = random.Random(8)
    picks = [easy.choose(view, legal, seat, rng) for _ in range(400)]
    assert all(p in legal for p in picks)
    others = sum(p != normal for p in picks)
    # a slip picks any of the legal moves, the heuristic's one among them
    assert 0.35 * 400 < others < 0.5 * 400, "seed 8"
