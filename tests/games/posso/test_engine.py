"""Setting a game up, and whole games of random play through the contract:
no exception, every card somewhere exactly once, refused actions change nothing,
views never show a hidden card, totals add up."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.posso import POSSO
from app.games.posso.engine import CARDS_PER_DECK, decks_needed
from app.games.posso.flow import full_deck
from app.games.posso.model import PossoState
from tests.games.harness import play_random
from tests.games.posso.checks import KeenRandom, conserved, drive, no_leak, totals_add_up
from tests.games.posso.helpers import act, close_window, deck_for

SEATS = [2, 3, 4, 7, 10]


def fewest_decks(seats: int) -> int:
    return -(-decks_needed(seats) // CARDS_PER_DECK)


# ---- setting up ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "options", "message"),
    [
        (1, {}, "2 to 10 seats"),
        (11, {}, "2 to 10 seats"),
        (4, {"decks": 1}, "1 deck cannot deal hand ten to 4 players: it needs 65 cards.*2 decks"),
        (10, {"decks": 2}, "2 decks cannot deal hand ten to 10 players.*3 decks or more"),
        (3, {"colour": "red"}, "unknown option"),
        (3, {"start_hand": 0}, "Start at hand: must be at least 1"),
        (3, {"start_hand": 11}, "Start at hand: must be at most 10"),
        (3, {"start_hand": "2"}, "Start at hand: must be a whole number"),
        (3, {"first_dealer": 3}, r"first dealer must be one of the 3 seats.*not seat 4"),
        (3, {"cutting": "sometimes"}, "Cutting: must be one of 'off', 'to lead' or 'to win'"),
        (3, {"dead_card": "yes"}, "Dead card: must be on or off"),
        (3, {"decks": 0}, "Decks: must be at least 1"),
    ],
)
def test_bad_set_ups_are_refused_clearly(
    seats: int, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        POSSO.new_game(seats, options, 1)


def test_bad_stacked_decks_are_refused() -> None:
    with pytest.raises(ValueError, match="JK 5 times"):
        POSSO.new_game(3, {}, 1, ["JK"] * 5)
    with pytest.raises(ValueError, match="is not a card"):
        POSSO.new_game(3, {}, 1, ["3H", "1C"])


@pytest.mark.parametrize(("seats", "decks"), [(2, 2), (3, 2), (4, 3), (7, 6), (10, 9)])
def test_default_decks_and_jokers(seats: int, decks: int) -> None:
    s = POSSO.new_game(seats, {}, 8)
    cards = Counter(POSSO.all_cards(s))
    assert cards["JK"] == 2 * decks and sum(cards.values()) == 54 * decks
    assert POSSO.view(s, None)["options"]["decks"] == decks
    assert POSSO.new_game(3, {"decks": 1}, 8).decks == 1


def test_same_seed_same_game() -> None:
    a = POSSO.new_game(4, {"cutting": "off"}, 99)
    assert a == POSSO.new_game(4, {"cutting": "off"}, 99)
    assert a != POSSO.new_game(4, {"cutting": "off"}, 98)


def test_views_are_json_and_carry_the_common_keys() -> None:
    s = POSSO.new_game(4, {}, 5)
    for seat in [None, 0, 1, 2, 3]:
        v = POSSO.view(s, seat)
        json.dumps(v)
        for key in ("game", "seat", "seats", "phase", "to_act", "turn", "dealer", "counts"):
            assert key in v
        for key in ("over", "result", "hand_no", "requirement", "melds", "down", "pile_top"):
            assert key in v
        for key in ("pile_size", "stack_count", "posso", "sheet", "totals", "timer", "cut"):
            assert key in v
        assert ("hand" in v) == (seat is not None)
    with pytest.raises(ValueError, match="no seat"):
        POSSO.view(s, 4)


# ---- random play ----------------------------------------------------------------------

options = st.fixed_dictionaries(
    {
        "cutting": st.sampled_from(["off", "to_lead", "to_win"]),
        "dead_card": st.booleans(),
        "no_posso_down": st.booleans(),
        "start_hand": st.integers(min_value=8, max_value=10),
    }
)


@settings(max_examples=220)
@given(
    seats=st.sampled_from(SEATS),
    opts=options,
    spare_deck=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_random_short_games(
    seats: int, opts: dict[str, object], spare_deck: bool, seed: int
) -> None:
    decks = fewest_decks(seats) + (1 if spare_deck else 0)
    state, _ = drive(seats, {**opts, "decks": decks}, seed)
    assert POSSO.is_over(state)
    start = opts["start_hand"]
    assert isinstance(start, int)
    assert [row["hand"] for row in state.sheet] == list(range(start, 11))


@pytest.mark.parametrize("seats", SEATS)
def test_random_full_games_from_hand_one(seats: int) -> None:
    state, _ = drive(seats, {"decks": fewest_decks(seats)}, 1000 + seats, leak_every=80)
    assert [row["hand"] for row in state.sheet] == list(range(1, 11))
    result = POSSO.result(state)
    assert result is not None and sorted(s for p in result["places"] for s in p) == list(
        range(seats)
    )
    best = min(state.totals)
    assert result["places"][0] == [s for s in range(seats) if state.totals[s] == best]


def test_a_full_game_with_the_default_decks() -> None:
    state, _ = drive(3, {"cutting": "to_win"}, 77, leak_every=80)
    assert len(state.sheet) == 10


@settings(max_examples=40)
@given(seats=st.sampled_from(SEATS), opts=options, seed=st.integers(0, 2**31))
def test_random_games_through_the_shared_harness(
    seats: int, opts: dict[str, object], seed: int
) -> None:
    leak_rng = random.Random(seed)
    counter = [0]

    def check(state: PossoState) -> None:
        conserved(state)
        totals_add_up(state)
        counter[0] += 1
        if counter[0] % 50 == 0:
            no_leak(state, leak_rng)

    decks = fewest_decks(seats)
    final = play_random(
        POSSO, seats, {**opts, "decks": decks}, seed, rng=KeenRandom(seed), check=check
    )
    assert POSSO.is_over(final)


# ---- hand ten: going down and out ---------------------------------------------------


@st.composite
def hand_ten_layouts(draw: st.DrawFn) -> tuple[int, list[str], str]:
    """(seats, the first player's 16 cards, the stack top that completes three runs)."""
    seats = draw(st.sampled_from(SEATS))
    suits = draw(st.permutations("CDHS"))
    lengths = draw(st.sampled_from([(5, 5, 7), (5, 6, 6), (6, 6, 5), (5, 7, 5)]))
    names = {11: "J", 12: "Q", 13: "K", 14: "A"}
    wilds = draw(st.permutations(["2C", "2D", "2H", "2S", "JK", "JK"]))
    cards: list[str] = []
    for suit, n in zip(suits, lengths, strict=False):
        low = draw(st.integers(3, 15 - n))
        run = [names.get(v, str(v)) + suit for v in range(low, low + n)]
        for i in draw(st.lists(st.integers(0, n - 1), max_size=2, unique=True)):
            run[i] = wilds.pop()
        cards += run
    cards = draw(st.permutations(cards))
    return seats, cards[:16], cards[16]


@settings(max_examples=30)
@given(layout=hand_ten_layouts(), seed=st.integers(0, 2**31))
def test_hand_ten_ends_when_someone_goes_down_and_out(
    layout: tuple[int, list[str], str], seed: int
) -> None:
    seats, first, last = layout
    decks = fewest_decks(seats) + 1
    rest = Counter(full_deck(decks)) - Counter([*first, last])
    pool = list(rest.elements())
    random.Random(seed).shuffle(pool)
    hands = [pool[i * 16 : (i + 1) * 16] for i in range(seats)]
    hands[1] = first  # dealer 0: seat 1 plays first
    upturn = pool[seats * 16]
    # with two players phantom A turns the stack's first card before seat 1 plays
    stack = [pool[-3], last] if seats == 2 else [last]
    deck = deck_for(seats, hands, upturn, stack, dealer=0, markers=(pool[-1], pool[-2]))
    opts = {"cutting": "off", "start_hand": 10, "first_dealer": 0, "decks": decks}
    s = close_window(POSSO.new_game(seats, opts, seed, deck))
    conserved(s)
    assert POSSO.legal_actions(s, 1) == [
        {"type": "draw", "source": "stack"},
        {"type": "draw", "source": "pile"},
    ]
    s, _ = act(s, 1, type="draw", source="stack")
    down = [a for a in POSSO.legal_actions(s, 1) if a["type"] == "go_down"]
    assert len(down) == 1
    s, events = POSSO.apply(s, 1, down[0])
    conserved(s)
    assert POSSO.is_over(s) and s.sheet[-1]["went_out"] == 1 and s.totals[1] == 0
    assert [e["type"] for e in events][-3:] == ["went_out", "hand_ended", "game_over"]
