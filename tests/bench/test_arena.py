"""bench/arena.py's line-ups: `search` is the determinized search itself, for
Possum too, whose strong level is its heuristic (docs/bots.md's Possum
search figures come from it)."""

from __future__ import annotations

import argparse

import pytest

from app.bots.levels import bot_for, heuristic_for
from app.bots.search import SearchBot
from bench.arena import Match, arena_bot, matches, play_deal


def _args(**kw: object) -> argparse.Namespace:
    base: dict[str, object] = {
        "game": "possum",
        "seats": 2,
        "options": None,
        "lineup": None,
        "budget": 4,
        "wall_cap": 5.0,
        "hands": 3,
    }
    return argparse.Namespace(**{**base, **kw})


def test_search_is_the_search_even_where_strong_is_the_heuristic() -> None:
    assert bot_for("possum", "strong") is heuristic_for("possum")
    bot = arena_bot("possum", "search", 4, 5.0)
    assert isinstance(bot, SearchBot)
    assert arena_bot("possum", "normal", None, None) is heuristic_for("possum")


def test_a_search_line_up_takes_the_budget_and_plays_a_deal() -> None:
    (match,) = matches(_args(lineup="search,normal"))
    assert match.lineup == ("search", "normal")
    assert (match.budget, match.wall_cap) == (4, 5.0)
    assert "budget 4" in match.title()
    # without a searching bot the budget is not the match's
    (plain,) = matches(_args(lineup="normal,random"))
    assert (plain.budget, plain.wall_cap) == (None, None)
    out = play_deal(Match("possum", 2, {}, ("search", "normal"), 4, 3, 5.0), seed=7)
    assert len(out.games) == 2  # one game a rotation
    assert {s.level for g in out.games for s in g} == {"search", "normal"}
    assert out.think_ms["search"], "the search chose moves"


def test_an_unknown_level_is_refused_with_the_levels() -> None:
    with pytest.raises(SystemExit, match="search"):
        list(matches(_args(lineup="clever,normal")))
