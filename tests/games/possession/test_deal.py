"""The deal and the start decision (docs/games/possession.md, Who starts)."""

from __future__ import annotations

import json

import pytest

from app.games.possession.deal import nearness
from tests.games.possession.helpers import G, act, drawn_card, stack, start

CLUBS = ["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "10C", "JC", "QC", "KC"]
SPADES = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "10S", "JS", "QS", "KS"]
DIAMONDS = ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "10D", "JD", "QD", "KD"]


def hand(special: str, filler: list[str]) -> str:
    """`special` cards topped up to 9 with filler that neither matches the
    upturned rank (9) nor its suit (hearts)."""
    cards = special.split()
    return " ".join(cards + filler[: 9 - len(cards)])


def test_more_cards_of_the_upturned_rank_start_even_against_nearer_suit_cards() -> None:
    # Seat 1 sits left of the dealer and holds 8H, 10H; seat 0 holds two nines.
    state = start([hand("9C 9S", CLUBS), hand("9D 8H 10H", DIAMONDS)], "9H", dealer=0)
    assert state.turn == 0 and state.starter == 0


def test_without_nines_the_nearer_card_of_the_suit_starts_8_beats_4() -> None:
    state = start([hand("8H", CLUBS), hand("4H", SPADES)], "9H", dealer=0)
    assert state.turn == 0
    state = start([hand("4H", CLUBS), hand("8H", SPADES)], "9H", dealer=0)
    assert state.turn == 1


def test_j_ties_with_7_and_the_next_nearest_card_decides() -> None:
    # J and 7 are both two from 9; then 5 (four away) beats 2 (seven away).
    state = start([hand("7H 5H", CLUBS), hand("JH 2H", SPADES)], "9H", dealer=0)
    assert state.turn == 0
    state = start([hand("JH 2H", CLUBS), hand("7H 5H", SPADES)], "9H", dealer=0)
    assert state.turn == 1


def test_a_further_card_beats_having_none() -> None:
    state = start([hand("7H AH", CLUBS), hand("JH", SPADES)], "9H", dealer=0)
    assert state.turn == 0


def test_distance_is_counted_with_ace_low_and_no_wrap() -> None:
    # Upturn KH: QH is one away, AH twelve away (not one).
    state = start([hand("AH", CLUBS), hand("QH", SPADES)], "KH", dealer=1)
    assert state.turn == 1


def test_a_full_tie_goes_to_the_first_tied_seat_left_of_the_dealer() -> None:
    hands = [hand("", CLUBS), hand("", SPADES), hand("", DIAMONDS)]
    for dealer, first in ((0, 1), (1, 2), (2, 0)):
        assert start(hands, "9H", dealer=dealer).turn == first
    # Seats 0 and 2 tie ahead of seat 1; with dealer 0 seat 2 is reached before seat 0.
    tied = [hand("8H", CLUBS), hand("2H", SPADES), hand("10H", DIAMONDS)]
    assert start(tied, "9H", dealer=0).turn == 2
    assert start(tied, "9H", dealer=2).turn == 0


def test_two_decks_an_identical_copy_of_the_upturn_counts_as_its_rank() -> None:
    # Seat 1 holds the other copy of 9H; the rest hold neither nines nor hearts.
    hands = [hand("", CLUBS), hand("9H", SPADES), hand("", DIAMONDS), hand("", CLUBS)]
    assert start(hands, "9H", dealer=3).turn == 1


def test_nearness_key_orders_as_the_ruling_says() -> None:
    assert nearness(["9C", "9S"], "9H") < nearness(["9C", "8H"], "9H")
    assert nearness(["8H"], "9H") < nearness(["4H"], "9H")
    assert nearness(["7H", "AH"], "9H") < nearness(["JH"], "9H")
    assert nearness(["JH"], "9H") < nearness(["2C"], "9H")


def test_the_start_decision_reveals_no_card() -> None:
    state = start([hand("9C 9S", CLUBS), hand("8H", SPADES)], "9H", dealer=1)
    assert state.turn == 0
    for viewer in (1, None):
        text = json.dumps(G.view(state, viewer))
        assert not any(f'"{c}"' in text for c in state.hands[0])
    text = json.dumps(G.view(state, 0))
    assert not any(f'"{c}"' in text for c in state.hands[1])


def test_dealing_order_one_card_at_a_time_from_the_dealers_left() -> None:
    deck = stack([" ".join(CLUBS[:9]), " ".join(SPADES[:9])], "KH", stock="QH JH")
    state = G.new_game(2, {"first_dealer": 0}, 5, deck)
    assert deck[0] in state.hands[1] and deck[1] in state.hands[0]
    assert state.pile == ("KH",) and len(state.stock) == 52 - 19
    seat = state.turn
    assert seat is not None
    _, events = act(state, seat, "draw", source="stock")
    assert drawn_card(events) == "QH"


def test_seats_decks_and_hand_sizes() -> None:
    for seats, total in ((2, 52), (3, 52), (4, 104)):
        state = G.new_game(seats, {}, 11)
        assert all(len(h) == 9 for h in state.hands)
        assert len(state.pile) == 1 and len(state.stock) == total - 9 * seats - 1
        assert sorted(G.all_cards(state)) == sorted(G.all_cards(G.new_game(seats, {}, 12)))


def test_the_first_dealer_is_seeded_and_repeatable() -> None:
    dealers = {G.new_game(3, {}, seed).dealer for seed in range(30)}
    assert dealers == {0, 1, 2}
    assert G.new_game(3, {}, 7) == G.new_game(3, {}, 7)


@pytest.mark.parametrize(
    ("seats", "options", "deck", "match"),
    [
        (1, {}, None, "2 to 4 seats"),
        (5, {}, None, "2 to 4 seats"),
        (2, {"first_dealer": 2}, None, r"first dealer must be one of the 2 seats.*\(1 to 2\)"),
        (2, {"open_pile": "yes"}, None, "Open pile: must be on or off"),
        (2, {"jokers": 2}, None, "unknown option"),
        (2, {}, ["AS", "AS"], "AS 2 times"),
        (2, {}, ["JK"], "JK"),
        (2, {}, ["1S"], "not a card"),
    ],
)
def test_bad_setups_are_refused_clearly(
    seats: int, options: dict[str, object], deck: list[str] | None, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        G.new_game(seats, options, 1, deck)
