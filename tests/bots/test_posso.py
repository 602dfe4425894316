"""The Posso bot: always legal, finishes games, beats random play, and makes
the obvious choices in a few set positions."""

from __future__ import annotations

import random
from typing import Any

from app.bots.base import RandomBot
from app.bots.posso import PossoBot
from app.games.posso import POSSO
from app.games.posso.model import PossoState
from tests.games.posso.helpers import act, close_window, game

BOT = PossoBot()
H0 = ["3H", "3C", "3D", "5H", "5S", "2C", "9H"]
H1 = ["4H", "4C", "4D", "6H", "6S", "JK", "2S"]
H2 = ["7H", "7C", "7D", "8H", "8S", "8C", "JH"]


def choice(state: PossoState, seat: int, seed: int = 0) -> dict[str, Any]:
    legal = POSSO.legal_actions(state, seat)
    action = BOT.choose(POSSO.view(state, seat), legal, seat, random.Random(seed))
    assert action in legal
    return action


def play(state: PossoState, bots: list[Any], seed: int) -> PossoState:
    rng = random.Random(seed)
    for _ in range(50_000):
        if POSSO.is_over(state):
            return state
        acting = sorted(POSSO.to_act(state))
        if not acting:  # a moot cut waits only on the room's timer, which has no time
            state, _ = POSSO.apply(state, None, {"type": "timeout"})
            continue
        seat = rng.choice(acting)
        legal = POSSO.legal_actions(state, seat)
        action = bots[seat].choose(POSSO.view(state, seat), legal, seat, rng)
        assert action in legal
        state, _ = POSSO.apply(state, seat, action)
    raise AssertionError("the game did not finish")


def test_bots_only_games_finish() -> None:
    for seats, opts in [(2, {}), (4, {"start_hand": 8}), (7, {"start_hand": 9, "decks": 3})]:
        final = play(POSSO.new_game(seats, opts, seats), [BOT] * seats, seats)
        assert len(final.sheet) == 11 - final.options.start_hand
        assert any(row["went_out"] is not None for row in final.sheet)


def test_the_bot_beats_random_players() -> None:
    wins = 0
    for g in range(4):
        final = play(POSSO.new_game(3, {"start_hand": 8}, g), [BOT, RandomBot(), RandomBot()], g)
        wins += final.totals[0] < min(final.totals[1:])
    assert wins >= 3


def test_it_goes_down_then_plays_naturals_before_wilds() -> None:
    s = close_window(game(3, [H0, H1, H2], "QS", ["4S"]))
    s, _ = act(s, 1, type="draw", source="stack")
    down = choice(s, 1)
    assert down["type"] == "go_down"
    s, _ = POSSO.apply(s, 1, down)
    first = choice(s, 1)
    assert first["type"] == "play_on" and first["cards"] == ["4S"]


def test_it_begs_for_wilds_and_passes_on_useless_cards() -> None:
    s = game(3, [H0, H1, H2], "JK")
    assert choice(s, 0) == {"type": "call_posso"}
    s = game(3, [H0, H1, H2], "KS")
    assert choice(s, 0) == {"type": "pass_posso"}
    assert choice(s, 2) == {"type": "pass_posso"}
    s = game(3, [H0, H1, H2], "5C")  # seat 0 holds two fives: a set in the making
    assert choice(s, 0) == {"type": "call_posso"}


def test_it_denies_a_posso_on_a_card_it_wants_and_draws_it() -> None:
    s = game(3, [H0, H1, H2], "4S")  # seat 1 (next) holds three fours
    s, _ = act(s, 2, type="call_posso")
    s = close_window(s)
    assert choice(s, 1) == {"type": "answer_posso", "allow": False}
    s = close_window(game(3, [H0, H1, H2], "4S"))
    assert choice(s, 1) == {"type": "draw", "source": "pile"}
    s = close_window(game(3, [H0, H1, H2], "KD"))
    assert choice(s, 1) == {"type": "draw", "source": "stack"}


def test_it_keeps_wilds_and_pairs_and_throws_the_loneliest_costly_card() -> None:
    mine = ["7H", "7C", "8H", "8S", "JK", "3D", "QC"]  # no go-down yet in hand 1
    s = close_window(game(3, [H0, mine, H2], "QS", ["KD"]))
    s, _ = act(s, 1, type="draw", source="stack")
    assert not any(a["type"] == "go_down" for a in POSSO.legal_actions(s, 1))
    assert choice(s, 1) in ({"type": "discard", "card": "QC"}, {"type": "discard", "card": "KD"})


def test_its_cut_is_one_of_the_offered_positions() -> None:
    s = POSSO.new_game(4, {}, 3)
    s.totals = [0 if seat != s.dealer else 30 for seat in range(4)]  # the cut matters
    picks = {choice(s, s.dealer, seed)["at"] for seed in range(30)}
    assert len(picks) > 1


def test_bots_do_not_pass_the_same_cards_round_for_ever() -> None:
    """Bots that always took a useful discard could hand a few cards round the
    table for ever, so the stack - whose running out ends a hand nobody wins -
    never shrank (this deal did, from hand 9).  Now and then they draw blind."""
    final = play(POSSO.new_game(3, {"start_hand": 9, "cutting": "off"}, 47), [BOT] * 3, 47)
    assert len(final.sheet) == 2
