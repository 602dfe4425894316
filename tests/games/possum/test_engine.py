"""Possum scenarios on stacked decks: the deal, every play and variation,
drawing, the automatic end of a turn, the reshuffle, skipping, the stalled
end, placing, and every refusal with its code."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from app.games import cards
from app.games.base import IllegalAction
from app.games.possum import POSSUM
from tests.games.harness import assert_refused
from tests.games.possum.positions import deal, deck_for, draw, play, position

OPP = "6H 8H 10H JH QH KH"


def refused(state: Any, seat: int, cards_: str) -> str:
    return assert_refused(POSSUM, state, seat, {"type": "play", "cards": cards_.split()})


def message(state: Any, seat: int, action: dict[str, Any]) -> str:
    with pytest.raises(IllegalAction) as info:
        POSSUM.apply(state, seat, action)
    return info.value.message


# -- the deal -----------------------------------------------------------------


@pytest.mark.parametrize(("seats", "decks"), [(2, 1), (3, 1), (4, 1), (5, 2), (6, 2)])
def test_the_deal(seats: int, decks: int) -> None:
    state = POSSUM.new_game(seats, {}, 9)
    assert [len(h) for h in state.hands] == [6] * seats
    assert Counter(POSSUM.all_cards(state)) == Counter(cards.build_deck(decks))
    assert len(state.pile) == 1 and len(state.draw) == 52 * decks - 6 * seats - 1
    assert state.turn == (state.dealer + 1) % seats
    assert state.draws_taken == 0


def test_no_face_cards_takes_out_j_q_k() -> None:
    state = POSSUM.new_game(6, {"no_face_cards": True}, 9)
    every = POSSUM.all_cards(state)
    assert len(every) == 80 and not any(c[:-1] in ("J", "Q", "K") for c in every)
    with pytest.raises(ValueError, match="QH"):
        POSSUM.new_game(2, {"no_face_cards": True}, 1, deck=["QH"])


def test_a_stacked_deck_deals_from_the_left_of_the_dealer() -> None:
    two = ["2C 3C 4C 5C 6C 7C", "2D 3D 4D 5D 6D 7D"]
    deck = deck_for(two, "9H", "KS QS")
    state = POSSUM.new_game(2, {"first_dealer": 1}, 1, deck=deck)
    assert state.hands[0] == tuple(two[0].split()) and state.turn == 0
    assert state.pile == ("9H",) and state.draw[:2] == ("KS", "QS")
    flipped = POSSUM.new_game(2, {"first_dealer": 0}, 1, deck=deck)
    assert flipped.hands[1] == tuple(two[0].split()) and flipped.turn == 1


@pytest.mark.parametrize(
    ("seats", "options", "match"),
    [
        (1, {}, "2 to 6 seats"),
        (7, {}, "2 to 6 seats"),
        (3, {"first_dealer": 3}, r"first dealer must be one of the 3 seats.*not seat 4"),
        (3, {"multiply": "yes"}, "Multiply: must be on or off"),
        (3, {"multi": 1}, "Multi: must be on or off"),
        (3, {"jokers": True}, "unknown option"),
    ],
)
def test_bad_set_ups_are_refused(seats: int, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        POSSUM.new_game(seats, options, 1)


# -- the three base plays --------------------------------------------------------


def test_play_one_card_equal_to_the_top() -> None:
    state = deal(["7H 2S 3S 4S 10S JS", "2D 3D 4D 5D 6D 8D"], top="7C")
    after, events = play(state, 0, "7H")
    assert after.pile == ("7C", "7H") and after.turn == 1
    assert events == [
        {
            "type": "played",
            "to": None,
            "seat": 0,
            "cards": ["7H"],
            "top": "7H",
            "pattern": "same",
            "left": 5,
        }
    ]
    assert refused(state, 0, "2S") == "not_equal"


def test_play_two_cards_adding_up_to_the_top_in_either_order() -> None:
    state = deal(["4S 5D 10S JS QS KS", OPP], top="9C")
    after, events = play(state, 0, "5D 4S")
    assert after.pile[-1] == "4S" and events[0]["pattern"] == "sum"
    after, _ = play(state, 0, "4S 5D")
    assert after.pile == ("9C", "4S", "5D")  # the order given; the last is the new top
    assert refused(state, 0, "4S 10S") == "sum_wrong"


def test_play_a_card_that_with_the_top_makes_another() -> None:
    state = deal(["4S 7D 10S JS QS KS", OPP], top="3C")
    after, events = play(state, 0, "7D 4S")
    assert events[0]["pattern"] == "plus_top" and after.pile[-1] == "4S"
    assert refused(state, 0, "4S JS") == "sum_wrong"


def test_the_sum_wrong_message_explains() -> None:
    state = deal(["4S 7D 10S JS QS KS", OPP], top="3C")
    text = message(state, 0, {"type": "play", "cards": ["4S", "JS"]})
    assert "4 + 11 = 15" in text and "3♣" in text


# -- variations ----------------------------------------------------------------


def test_product_plays_need_multiply() -> None:
    hands = ["2S 4D 10S JS QS KS", OPP]
    assert refused(deal(hands, top="8C"), 0, "2S 4D") == "multiply_off"
    after, events = play(deal(hands, top="8C", multiply=True), 0, "2S 4D")
    assert events[0]["pattern"] == "product" and after.pile[-1] == "4D"


def test_a_card_times_the_top_making_another_needs_multiply() -> None:
    hands = ["4S QD 10S JS 9S KS", OPP]
    assert refused(deal(hands, top="3C"), 0, "4S QD") == "multiply_off"
    _, events = play(deal(hands, top="3C", multiply=True), 0, "QD 4S")
    assert events[0]["pattern"] == "times_top"


def test_multi_plays_any_number_of_cards_equal_to_the_top() -> None:
    hands = ["5S 5D 5H 10S JS KS", OPP]
    assert refused(deal(hands, top="5C"), 0, "5S 5D") == "multi_off"
    state = deal(hands, top="5C", multi=True)
    after, events = play(state, 0, "5S 5H 5D")
    assert events[0]["pattern"] == "same" and after.pile[-1] == "5D"
    assert len(after.hands[0]) == 3
    after, _ = play(state, 0, "5H 5S")  # not necessarily all of them
    assert after.hands[0] == ("5D", "10S", "JS", "KS")


def test_multi_sums_of_three_cards() -> None:
    hands = ["2S 3D 4H 10S JS KS", OPP]
    assert refused(deal(hands, top="9C"), 0, "2S 3D 4H") == "multi_off"
    _, events = play(deal(hands, top="9C", multi=True), 0, "2S 3D 4H")
    assert events[0]["pattern"] == "sum"


def test_multi_two_cards_plus_the_top_making_a_third() -> None:
    hands = ["2S 3D 9H 10S JS KS", OPP]
    assert refused(deal(hands, top="4C"), 0, "2S 3D 9H") == "multi_off"
    _, events = play(deal(hands, top="4C", multi=True), 0, "9H 2S 3D")
    assert events[0]["pattern"] == "plus_top"


def test_multi_keeps_products_to_exactly_two_cards() -> None:
    hands = ["2S 2D 3H 6S JS KS", OPP]
    state = deal(hands, top="QC", multi=True, multiply=True)
    assert refused(state, 0, "2S 2D 3H") == "sum_wrong"
    _, events = play(state, 0, "2S 6S")
    assert events[0]["pattern"] == "product"


def test_too_many_cards() -> None:
    state = deal(["AS 2D 3H 4S JS KS", OPP], top="QC", multi=True)
    assert refused(state, 0, "AS 2D 3H 4S") == "too_many_cards"


# -- drawing -------------------------------------------------------------------


def test_drawing_when_a_play_exists_is_refused() -> None:
    state = deal(["7H 8S 10S JS QS KS", OPP], top="7C")
    assert assert_refused(POSSUM, state, 0, {"type": "draw"}) == "must_play"
    assert POSSUM.legal_actions(state, 0) == [{"type": "play", "cards": ["7H"]}]


def test_draw_then_play_the_drawn_card() -> None:
    state = deal(["2S 4S 6S 8S 10S QS", OPP], top="AC", draw="AH 4D")
    assert POSSUM.legal_actions(state, 0) == [{"type": "draw"}]
    state, events = draw(state, 0)
    assert [(e["type"], e["to"]) for e in events] == [("drew", None), ("drew_card", 0)]
    assert "card" not in events[0] and events[1]["card"] == "AH"
    assert state.turn == 0 and state.draws_taken == 1
    assert POSSUM.view(state, 0)["can_play"] is True
    assert assert_refused(POSSUM, state, 0, {"type": "draw"}) == "must_play"
    state, _ = play(state, 0, "AH")
    assert state.turn == 1 and state.draws_taken == 0


def test_a_second_draw_then_play() -> None:
    state = deal(["2S 4S 6S 8S 10S QS", OPP], top="AC", draw="4D AH")
    state, _ = draw(state, 0)
    assert state.turn == 0 and POSSUM.legal_actions(state, 0) == [{"type": "draw"}]
    state, _ = draw(state, 0)
    assert state.draws_taken == 2 and state.turn == 0
    assert assert_refused(POSSUM, state, 0, {"type": "draw"}) == "draw_limit"  # a third draw
    state, _ = play(state, 0, "AH")
    assert state.hands[0] == ("2S", "4D", "4S", "6S", "8S", "10S", "QS")


def test_the_turn_ends_by_itself_after_two_fruitless_draws() -> None:
    state = deal(["2S 4S 6S 8S 10S QS", OPP], top="AC", draw="4D 2D AH")
    state, _ = draw(state, 0)
    state, events = draw(state, 0)
    assert [e["type"] for e in events] == ["drew", "drew_card", "turn_ended"]
    assert events[-1] == {"type": "turn_ended", "to": None, "seat": 0, "reason": "no_play"}
    assert state.turn == 1 and state.draws_taken == 0 and len(state.hands[0]) == 8


def test_single_draw_allows_one_draw() -> None:
    state = deal(["2S 4S 6S 8S 10S QS", OPP], top="AC", draw="4D AH", single_draw=True)
    after, events = draw(state, 0)
    assert events[-1]["type"] == "turn_ended" and after.turn == 1
    state = deal(["2S 4S 6S 8S 10S QS", OPP], top="AC", draw="AH 4D", single_draw=True)
    state, _ = draw(state, 0)
    assert assert_refused(POSSUM, state, 0, {"type": "draw"}) == "draw_limit"
    assert POSSUM.view(state, 0)["draw_limit"] == 1


# -- the reshuffle, skipping and the stalled end ----------------------------------


def test_an_empty_draw_pile_is_rebuilt_from_the_pile_under_its_top() -> None:
    state = position(["2S 3S", "2D 3D"], pile="4C 5C 6C AH KC", draw="")
    after, events = draw(state, 0)
    assert [e["type"] for e in events[:2]] == ["reshuffled", "drew"]
    assert events[0]["draw_count"] == 4 and events[0]["reshuffles"] == 1
    assert after.pile == ("KC",)  # the top card stays
    drawn = next(e["card"] for e in events if e["type"] == "drew_card")
    assert Counter((*after.draw, drawn)) == Counter(["4C", "5C", "6C", "AH"])
    assert after.reshuffles == 1
    # seeded: the same position always reshuffles the same way
    assert POSSUM.apply(state, 0, {"type": "draw"}) == (after, events)


def test_a_seat_that_can_neither_play_nor_draw_is_skipped() -> None:
    # seat 0 draws the last card, and there is nothing under the top to reshuffle
    state = position(["2S 3S", "4D 5D", "AH QD"], pile="KC", draw="9H")
    after, events = draw(state, 0)
    types = [e["type"] for e in events]
    assert types == ["drew", "drew_card", "turn_ended", "skipped"]
    assert events[-1]["seat"] == 1 and after.turn == 2  # A + Q = K
    assert POSSUM.to_act(after) == {2}
    assert POSSUM.legal_actions(after, 1) == []


def test_the_game_ends_stalled_when_every_seat_would_be_skipped() -> None:
    state = position(["3C 4C", "5H 6H"], pile="KC", draw="2D")
    after, events = draw(state, 0)
    assert [e["type"] for e in events] == [
        "drew",
        "drew_card",
        "turn_ended",
        "skipped",
        "skipped",
        "game_over",
    ]
    assert after.over and after.stalled and after.winner is None
    result = {"places": [[1], [0]], "scores": [3, 2]}
    assert POSSUM.result(after) == result
    assert events[-1]["result"] == result and events[-1]["stalled"] is True
    assert events[-1]["hands"] == [["2D", "3C", "4C"], ["5H", "6H"]]
    view = POSSUM.view(after, None)
    assert view["over"] and view["stalled"] and view["to_act"] == []
    assert view["hands"] == [["2D", "3C", "4C"], ["5H", "6H"]]


# -- winning and placing ----------------------------------------------------------


def test_the_first_to_run_out_wins_and_the_rest_are_placed() -> None:
    state = position(["7H", "2D 3D", "KD", "AS 4S", "AD 4D"], pile="7C", draw="9H 9S")
    after, events = play(state, 0, "7H")
    assert [e["type"] for e in events] == ["played", "went_out", "game_over"]
    # fewest cards, then lowest total; equal seats share a place
    assert POSSUM.result(after) == {
        "places": [[0], [2], [1, 3, 4]],
        "scores": [0, 2, 1, 2, 2],
    }
    assert after.winner == 0 and not after.stalled
    assert assert_refused(POSSUM, after, 1, {"type": "draw"}) == "game_over"
    assert all(POSSUM.legal_actions(after, s) == [] for s in range(5))


def test_lowest_total_breaks_a_tie_in_cards() -> None:
    state = position(["7H", "2D 3D", "KD QS", "AS 5S"], pile="7C", draw="9H")
    # seats 1 and 3 both hold 2 cards; 2 + 3 < 1 + 5
    after, _ = play(state, 0, "7H")
    assert POSSUM.result(after) == {"places": [[0], [1], [3], [2]], "scores": [0, 2, 2, 2]}


# -- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seat", "action", "code"),
    [
        (1, {"type": "play", "cards": ["7D"]}, "not_your_turn"),
        (None, {"type": "draw"}, "not_your_turn"),
        (0.0, {"type": "play", "cards": ["7H"]}, "not_your_turn"),  # a seat is an int
        (0, {"type": "timeout"}, "no_timer"),
        (0, {"type": "pass"}, "unknown_action"),
        (0, [], "bad_action"),
        (0, {"type": "play"}, "bad_action"),
        (0, {"type": "play", "cards": []}, "bad_cards"),
        (0, {"type": "play", "cards": "7H"}, "bad_cards"),
        (0, {"type": "play", "cards": ["7X"]}, "bad_card"),
        (0, {"type": "play", "cards": ["JK"]}, "bad_card"),
        (0, {"type": "play", "cards": ["7D"]}, "not_in_hand"),
        (0, {"type": "play", "cards": ["7H", "7H"]}, "not_in_hand"),
        (0, {"type": "draw", "source": "stack"}, "bad_action"),
    ],
)
def test_bad_actions_are_refused_and_change_nothing(seat: Any, action: Any, code: str) -> None:
    state = deal(["7H 2S 3S 4S 10S JS", OPP], top="7C")
    assert assert_refused(POSSUM, state, seat, action) == code


def test_face_cards_are_refused_without_face_cards() -> None:
    state = position(["2S 3S", "2D 3D"], pile="5C", draw="9H", no_face_cards=True)
    code = assert_refused(POSSUM, state, 0, {"type": "play", "cards": ["QS"]})
    assert code == "bad_card"
