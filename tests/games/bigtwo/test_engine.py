"""Big Two turn flow: the opening lead, following, passing, control, going
out, placements, and the refusal of every bad action."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from app.games.bigtwo import BIGTWO
from app.games.bigtwo.order import DECK
from tests.games.bigtwo.positions import deck_for, pass_, play, position
from tests.games.harness import assert_refused

HANDS = [
    "3C 3S 4C 5C 6C 7C 8C 9C 10C JC QC KC AC",
    "3H 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2C",
    "3D 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2S",
    "4D 5D 6D 7D 8D 9D 10D JD QD KD AD 2H 2D",
]


def fresh(**options: Any) -> Any:
    return BIGTWO.new_game(4, {"first_dealer": 3, **options}, seed=5, deck=deck_for(HANDS))


def play_action(cards: str) -> dict[str, Any]:
    return {"type": "play", "cards": cards.split()}


# -- the deal -------------------------------------------------------------------


def test_the_deal_gives_13_each_and_the_3c_holder_leads() -> None:
    for seed in range(20):
        state = BIGTWO.new_game(4, {}, seed)
        assert [len(h) for h in state.hands] == [13] * 4
        assert Counter(BIGTWO.all_cards(state)) == Counter(DECK)
        assert "3C" in state.hands[state.turn]
        view = BIGTWO.view(state, state.turn)
        assert view["control"] and view["must_include"] == "3C" and view["trick"] is None


def test_first_dealer_sets_who_is_dealt_to_first() -> None:
    deck = deck_for(HANDS)
    state = BIGTWO.new_game(4, {"first_dealer": 3}, 1, deck=deck)
    assert state.hands[0] == tuple(HANDS[0].split())
    assert state.turn == 0
    shifted = BIGTWO.new_game(4, {"first_dealer": 0}, 1, deck=deck)
    assert shifted.hands[1] == tuple(HANDS[0].split())  # the first card went to seat 1
    assert shifted.turn == 1 and BIGTWO.view(shifted, None)["dealt_first"] == 1
    assert BIGTWO.view(shifted, None)["dealer"] is None  # Big Two has no dealer


@pytest.mark.parametrize(
    ("seats", "options", "match"),
    [
        (3, {}, "4 to 4 seats"),
        (5, {}, "4 to 4 seats"),
        (4, {"nope": 1}, "unknown option"),
        (4, {"first_dealer": 4}, "First dealer: must be one of the seats, 1 to 4"),
        (4, {"first_dealer": "1"}, "First dealer: must be a whole number"),
        (4, {"pass_locks": "yes"}, "Passing locks you out: must be on or off"),
    ],
)
def test_bad_set_ups_are_refused(seats: int, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        BIGTWO.new_game(seats, options, 1)


def test_a_stacked_deck_cannot_name_a_card_twice_or_a_joker() -> None:
    with pytest.raises(ValueError, match="3C 2 times"):
        BIGTWO.new_game(4, {}, 1, deck=["3C", "3C"])
    with pytest.raises(ValueError, match="JK"):
        BIGTWO.new_game(4, {}, 1, deck=["JK"])


# -- the opening lead ---------------------------------------------------------


def test_the_first_play_must_hold_3c() -> None:
    state = fresh()
    assert assert_refused(BIGTWO, state, 0, play_action("4C")) == "must_include_3c"
    assert assert_refused(BIGTWO, state, 0, {"type": "pass"}) == "cannot_pass"
    legal = BIGTWO.legal_actions(state, 0)
    assert legal and all("3C" in a["cards"] for a in legal)
    # 3C alone, the pair of 3s, and the club straight flushes 3-7 and A-5 ... K-4 windows
    assert {"type": "play", "cards": ["3C"]} in legal
    assert {"type": "play", "cards": ["3C", "3S"]} in legal
    after, events = play(state, 0, "3C 3S")
    assert after.turn == 1 and not after.first_play
    assert events[0] == {
        "type": "played",
        "to": None,
        "seat": 0,
        "cards": ["3C", "3S"],
        "category": "pair",
        "left": 11,
    }


def test_following_needs_the_same_size_and_a_higher_combination() -> None:
    state, _ = play(fresh(), 0, "3C")
    assert assert_refused(BIGTWO, state, 1, play_action("4S 5S 6S 7S 8S")) == "wrong_size"
    state, _ = play(state, 1, "3H")
    assert assert_refused(BIGTWO, state, 2, play_action("3D 2S")) == "not_a_combination"
    assert assert_refused(BIGTWO, state, 2, play_action("QH KH")) == "not_a_combination"
    state, _ = play(state, 2, "3D")
    code = assert_refused(BIGTWO, state, 3, play_action("2H 2D"))
    assert code == "wrong_size"  # a pair cannot follow a single
    legal = BIGTWO.legal_actions(state, 3)
    assert {"type": "pass"} in legal and len(legal) == 14  # every card beats 3D, or pass


def test_a_lower_single_is_refused_with_both_cards_named() -> None:
    state = position(["5C", "4S 9S", "6H", "7D"], turn=1, trick=("5C", 0))
    with pytest.raises(Exception) as info:
        BIGTWO.apply(state, 1, play_action("4S"))
    assert getattr(info.value, "code", None) == "too_low"
    assert "4♠" in str(info.value) and "5♣" in str(info.value)


def test_four_cards_are_refused_with_a_clear_error() -> None:
    state = fresh()
    with pytest.raises(Exception) as info:
        BIGTWO.apply(state, 0, play_action("3C 4C 5C 6C"))
    assert getattr(info.value, "code", None) == "four_cards"
    assert "4-card" in str(info.value)
    assert assert_refused(BIGTWO, state, 0, play_action("3C 4C 5C 6C 7C 8C")) == "bad_size"


# -- passing and control ------------------------------------------------------


def test_control_after_three_passes() -> None:
    state, _ = play(fresh(), 0, "3C")
    for seat in (1, 2, 3):
        state = pass_(state, seat)
    assert state.turn == 0 and state.trick is None
    view = BIGTWO.view(state, 0)
    assert view["control"] and view["trick"] is None and view["passed"] == []
    # the cleared table still says what was last played, to every viewer
    for viewer in (None, 0, 2):
        last = BIGTWO.view(state, viewer)["last_play"]
        assert last == {"cards": ["3C"], "seat": 0, "category": "single", "size": 1}
    assert assert_refused(BIGTWO, state, 0, {"type": "pass"}) == "cannot_pass"
    # in control any combination may be led, a different size included
    state, _ = play(state, 0, "4C 5C 6C 7C 8C")
    assert state.trick is not None and state.trick.combo.category == "straight_flush"


def test_the_last_pass_announces_control() -> None:
    state = position(["9C", "4S", "6H", "7D"], turn=3, trick=("8C", 0), passed=(1, 2))
    after, events = BIGTWO.apply(state, 3, {"type": "pass"})
    assert [e["type"] for e in events] == ["passed", "control"]
    assert events[1]["seat"] == 0 and after.turn == 0


def test_without_pass_locks_a_seat_that_passed_may_play_later() -> None:
    state = position(["5C 9C", "6S 10S", "7H JH", "8D QD"], turn=1, trick=("4C", 0))
    state = pass_(state, 1)
    state, _ = play(state, 2, "7H")
    state = pass_(state, 3)
    state = pass_(state, 0)
    assert state.turn == 1 and state.trick is not None
    state, _ = play(state, 1, "10S")  # seat 1 passed earlier, and plays now
    assert state.trick is not None and state.trick.seat == 1


def test_with_pass_locks_a_seat_that_passed_is_skipped_until_control() -> None:
    state = position(
        ["5C 9C", "6S 10S", "7H JH", "8D QD"], turn=1, trick=("4C", 0), pass_locks=True
    )
    state = pass_(state, 1)
    state, _ = play(state, 2, "7H")
    assert state.turn == 3 and BIGTWO.view(state, None)["passed"] == [1]
    state = pass_(state, 3)
    after, events = BIGTWO.apply(state, 0, {"type": "pass"})
    # seats 1 and 3 are locked out, seat 0 has passed: seat 2 takes control
    assert after.turn == 2 and after.trick is None and after.passed == frozenset()
    assert events[-1] == {"type": "control", "to": None, "seat": 2, "reason": "all_passed"}


def test_with_pass_locks_the_overtaken_owner_may_still_answer() -> None:
    state = position(
        ["5C 9C", "6S 10S", "7H JH", "8D QD"],
        turn=0,
        trick=("4C", 3),
        passed=(1, 2),
        pass_locks=True,
    )
    after, _ = play(state, 0, "5C")
    # seat 3 owned the trick and is not locked: it may answer
    assert after.turn == 3
    after = pass_(after, 3)
    assert after.turn == 0 and after.trick is None


def test_control_passes_on_when_the_player_before_goes_out() -> None:
    state = position(["9C 10C", "2D", "3H 4H", "5D 6D"], turn=1, trick=("AC", 0))
    after, events = play(state, 1, "2D")
    assert [e["type"] for e in events] == ["played", "went_out", "control"]
    assert events[1]["place"] == 1
    assert events[2] == {"type": "control", "to": None, "seat": 2, "reason": "went_out"}
    assert after.turn == 2 and after.trick is None and after.places == (1,)
    assert BIGTWO.view(after, 2)["control"]


def test_finished_players_are_skipped() -> None:
    state = position(["9C 10C", "", "3H 4H", "5D 6D"], turn=0, trick=None, places=(1,))
    state, _ = play(state, 0, "9C")
    assert state.turn == 2  # seat 1 holds nothing
    state = pass_(state, 2)
    state = pass_(state, 3)
    assert state.turn == 0 and state.trick is None  # seat 1 need not pass
    assert BIGTWO.legal_actions(state, 1) == []
    # the seat after a going-out player is found past the finished ones too
    state = position(["9C", "", "3H 4H", "5D 6D"], turn=0, trick=("8C", 3), places=(1,))
    after, _ = play(state, 0, "9C")
    assert after.turn == 2 and after.trick is None


def test_the_game_ends_when_one_player_holds_cards() -> None:
    state = position(["", "", "3H 4H", "2D"], turn=3, trick=("AC", 2), places=(1, 0))
    after, events = play(state, 3, "2D")
    assert after.turn is None
    assert [e["type"] for e in events] == ["played", "went_out", "game_over"]
    result = BIGTWO.result(after)
    assert result == {"places": [[1], [0], [3], [2]], "scores": [2, 1, 4, 3]}
    assert events[-1]["result"] == result
    assert events[-1]["hands"] == [[], [], ["3H", "4H"], []]
    view = BIGTWO.view(after, 0)
    assert view["over"] and view["phase"] == "over" and view["to_act"] == []
    assert view["hands"][2] == ["3H", "4H"]
    assert view["result"] == result
    for seat in range(4):
        assert BIGTWO.legal_actions(after, seat) == []
    assert assert_refused(BIGTWO, after, 2, play_action("3H")) == "game_over"


# -- bad input ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seat", "action", "code"),
    [
        (1, {"type": "play", "cards": ["3H"]}, "not_your_turn"),
        (None, {"type": "play", "cards": ["3C"]}, "not_your_turn"),
        (0.0, {"type": "play", "cards": ["3C"]}, "not_your_turn"),  # a seat is an int
        (0, {"type": "timeout"}, "no_timer"),
        (0, {"type": "draw"}, "unknown_action"),
        (0, {}, "unknown_action"),
        (0, "pass", "bad_action"),
        (0, {"type": "play"}, "bad_action"),
        (0, {"type": "play", "cards": "3C"}, "bad_cards"),
        (0, {"type": "play", "cards": []}, "bad_cards"),
        (0, {"type": "play", "cards": ["3C", 7]}, "bad_card"),
        (0, {"type": "play", "cards": ["JK"]}, "bad_card"),
        (0, {"type": "play", "cards": ["3C", "3C"]}, "duplicate_card"),
        (0, {"type": "play", "cards": ["2D"]}, "not_in_hand"),
        (0, {"type": "play", "cards": ["3C"], "extra": 1}, "bad_action"),
    ],
)
def test_bad_actions_are_refused_and_change_nothing(seat: Any, action: Any, code: str) -> None:
    assert assert_refused(BIGTWO, fresh(), seat, action) == code


def test_legal_actions_are_empty_off_turn_and_accepted_on_turn() -> None:
    state = fresh()
    assert all(BIGTWO.legal_actions(state, s) == [] for s in (1, 2, 3))
    for action in BIGTWO.legal_actions(state, 0):
        BIGTWO.apply(state, 0, action)


def test_a_full_hand_in_control_lists_every_lead() -> None:
    hand = "3C 3S 3H 4C 4S 5C 5H 6C 6D 7C 7S 8C 9C"
    state = position([hand, "2D", "2H", "2S"], turn=0)
    legal = BIGTWO.legal_actions(state, 0)
    # 13 singles, 7 pairs, 1 triple; straights 3-7: 48, 4-8: 16, 5-9: 8;
    # club flushes C(7,5)=21 less the 3 straight flushes; 4 full houses on the 3s
    assert len(legal) == 13 + 7 + 1 + 48 + 16 + 8 + 18 + 4
    assert {"type": "play", "cards": ["3C", "4C", "5C", "6C", "7C"]} in legal
    assert {"type": "play", "cards": ["3C", "3S", "3H", "4C", "4S"]} in legal
    assert {"type": "pass"} not in legal


def test_with_pass_locks_going_out_hands_control_to_the_next_holder_even_if_locked() -> None:
    state = position(
        ["9C 10C", "2D", "3H 4H", "5D 6D"], turn=1, trick=("AC", 0), passed=(2,), pass_locks=True
    )
    after, events = play(state, 1, "2D")
    assert after.turn == 2 and after.trick is None and after.passed == frozenset()
    assert events[-1]["reason"] == "went_out"
