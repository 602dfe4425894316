"""Random complete games through the engine contract (tests/games/harness.py):
no exception, every listed action accepted, refusals change nothing, cards
conserved, and the table always in a state the rules allow."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.cards import build_deck
from app.games.possession.combos import extension_problem, new_property_kind
from app.games.possession.model import OVER, PLAY, SHOWDOWN, PossessionState, Property
from tests.games.harness import assert_refused, play_random
from tests.games.possession.driver import random_game
from tests.games.possession.helpers import G

OPTIONS = st.fixed_dictionaries(
    {}, optional={"open_pile": st.booleans(), "distinct_suit_sets": st.booleans()}
)


def valid_property(p: Property, state: PossessionState) -> bool:
    """Any property on the table could have been built by legal steps: its
    first three cards form a new property and the rest extend it."""
    if new_property_kind(list(p.cards[:3]), state.rules) != p.kind:
        return False
    built = Property(p.id, p.owner, p.kind, p.cards[:3])
    return not p.cards[3:] or extension_problem(built, p.cards[3:], state.rules) is None


def invariants(state: PossessionState) -> None:
    rules = state.rules
    assert Counter(G.all_cards(state)) == Counter(build_deck(rules.decks))
    assert all(len(h) <= 10 for h in state.hands)
    assert [p.id for p in state.properties] == [f"p{i}" for i in range(1, state.next_id)]
    for p in state.properties:
        assert 0 <= p.owner < rules.seats and valid_property(p, state), p
    if state.phase == PLAY:
        assert (state.stock or state.drawn) and not state.folded and state.turn is not None
        assert all(state.hands)
    elif state.phase == SHOWDOWN:
        assert not state.stock and state.turn not in state.folded
        assert all(state.hands[s] for s in range(rules.seats) if s not in state.folded)
        assert state.open_season == (len(state.folded) == rules.seats - 1)
    else:
        assert state.phase == OVER and state.turn is None
        assert state.emptied_by is not None or len(state.folded) == rules.seats
    if rules.seats == 3 and state.turned_over:
        # hands + estates never hold fewer than the 27 dealt cards (a discard
        # turn keeps the count, a property turn raises it), so the turned-over
        # pile is at most 25 cards: exactly 25 when nobody made a property.
        assert state.phase != PLAY or len(state.stock) <= 52 - 27


@settings(max_examples=30)
@given(seed=st.integers(0, 10**6), seats=st.sampled_from([2, 3, 4]), options=OPTIONS)
def test_random_games_keep_the_contract(seed: int, seats: int, options: dict[str, Any]) -> None:
    final = play_random(G, seats, options, seed, check=invariants)
    result = G.result(final)
    assert result is not None
    scores = [sum(len(p.cards) for p in final.properties if p.owner == s) for s in range(seats)]
    assert result["scores"] == scores
    assert sorted(s for place in result["places"] for s in place) == list(range(seats))
    best = [s for s in range(seats) if scores[s] == max(scores)]
    assert result["places"][0] == best


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), seats=st.sampled_from([2, 3, 4]), options=OPTIONS)
def test_property_heavy_games_refuse_wrong_moves_without_change(
    seed: int, seats: int, options: dict[str, Any]
) -> None:
    """Games full of melds and steals, with near-miss moves thrown at them."""
    rng = random.Random(seed)
    for before, seat, action, after, _ in random_game(seats, options, seed):
        invariants(after)
        if action["type"] == "meld" and len(action["cards"]) > 1:
            # Leaving a needed card out breaks the property (sets of 3 need 3, runs a gap).
            broken = {**action, "cards": action["cards"][1:]}
            if action["from_pile"] + len(broken["cards"]) < 3:
                assert_refused(G, before, seat, broken)
        if action["type"] in ("meld", "extend", "discard"):
            wrong = rng.choice([s for s in range(seats) if s != seat])
            assert_refused(G, before, wrong, action)
        if action["type"] == "extend" and len(action["cards"]) >= 3:
            prop = next(p for p in before.properties if p.id == action["property"])
            if prop.kind == "run":  # listed low to high: dropping the second leaves a gap
                gap = {**action, "cards": [action["cards"][0], *action["cards"][2:]]}
                assert assert_refused(G, before, seat, gap) == "not_consecutive"
