"""The shared action-envelope readers every engine calls before its rules."""

from __future__ import annotations

from typing import Any

import pytest

from app.games import GAMES
from app.games.base import IllegalAction, Shapes, check_held, read_action, read_card, read_cards

SHAPES: Shapes = {
    "play": (frozenset({"cards"}), frozenset({"note"})),
    "pass": (frozenset(), frozenset()),
}


def refusal(fn: Any, *args: Any, **kwargs: Any) -> IllegalAction:
    with pytest.raises(IllegalAction) as info:
        fn(*args, **kwargs)
    assert info.value.message, "a refusal must say why"
    return info.value


def test_a_sound_action_passes_and_names_its_type() -> None:
    assert read_action({"type": "play", "cards": ["AS"]}, SHAPES, "Test") == "play"
    assert read_action({"type": "play", "cards": ["AS"], "note": 1}, SHAPES, "Test") == "play"
    assert read_action({"type": "pass"}, SHAPES, "Test") == "pass"


@pytest.mark.parametrize(
    ("action", "code", "words"),
    [
        ("pass", "bad_action", "JSON object"),
        (["pass"], "bad_action", "JSON object"),
        ({"type": "play"}, "bad_action", "cards"),
        ({"type": "pass", "cards": ["AS"]}, "bad_action", "cards"),
        # as many fields as a play takes, but not the one it needs
        ({"type": "play", "card": ["AS"]}, "bad_action", "cards"),
        ({"type": "fly"}, "unknown_action", "Test knows pass, play"),
        ({}, "unknown_action", "Test knows pass, play"),
        ({"type": 3}, "unknown_action", "Test knows pass, play"),
    ],
)
def test_bad_envelopes_are_refused(action: Any, code: str, words: str) -> None:
    err = refusal(read_action, action, SHAPES, "Test")
    assert err.code == code
    assert words in err.message


def test_card_codes() -> None:
    assert read_card("10H") == "10H"
    assert read_card("JK") == "JK"
    for bad in ("11H", 5, None, "as"):
        assert refusal(read_card, bad).code == "bad_card"
    assert "jokers" in refusal(read_card, "JK", jokers=False).message


def test_card_lists() -> None:
    assert read_cards(["AS", "JK"]) == ["AS", "JK"]
    for bad in ([], "AS", None, {"AS": 1}):
        assert refusal(read_cards, bad).code == "bad_cards"
    assert refusal(read_cards, ["AS", "ZZ"]).code == "bad_card"
    assert refusal(read_cards, ["AS", "JK"], jokers=False).code == "bad_card"
    assert "a meld's cards" in refusal(read_cards, [], what="a meld's cards").message


def test_held_cards_count_copies() -> None:
    check_held(["7D", "7D", "AS"], ["7D", "7D"])
    check_held(["7D", "AS"], [])
    missing = refusal(check_held, ["7D", "AS"], ["KC"])
    assert missing.code == "not_in_hand" and "K♣" in missing.message
    short = refusal(check_held, ["7D", "AS"], ["7D", "7D"])
    assert short.code == "not_in_hand" and "you hold 1 7♦, not 2" in short.message


@pytest.mark.parametrize("name", ["posso", "possession", "possum", "bigtwo"])
def test_every_game_chooses_its_first_dealer_the_same_way(name: str) -> None:
    game = GAMES[name]
    seats = 4
    picked = {game.view(game.new_game(seats, {}, seed), None)["dealer"] for seed in range(40)}
    if name != "bigtwo":  # Big Two has no dealer in its view
        assert picked == set(range(seats)), "the seed should reach every seat"
    if name != "bigtwo":  # a seat the option allows, but past this table's seats
        seat_4 = r"must be one of the 2 seats at this table \(1 to 2\), not seat 4"
        with pytest.raises(ValueError, match=seat_4):
            game.new_game(2, {"first_dealer": 3}, 1)
    with pytest.raises(ValueError, match=r"(?i)first dealer.* one of the") as refused:
        game.new_game(seats, {"first_dealer": 99}, 1)
    assert "_" not in str(refused.value) and "Input should" not in str(refused.value)
    for bad_seed in (True, 1.5, "7"):
        with pytest.raises(ValueError, match="seed must be an integer"):
            game.new_game(seats, {}, bad_seed)  # type: ignore[arg-type]


def test_choose_dealer_honours_the_option_and_repeats_for_a_seed() -> None:
    game = GAMES["possum"]
    assert game.choose_dealer(5, 123, 2) == 2
    assert game.choose_dealer(5, 123, None) == game.choose_dealer(5, 123, None)
