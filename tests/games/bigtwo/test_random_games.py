"""Hundreds of random Big Two games through the engine contract: no exception,
the 52 cards conserved, refused actions change nothing, no view or event
shows a seat a card it may not know."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.bigtwo import BIGTWO
from app.games.bigtwo.model import BigTwoState
from app.games.bigtwo.order import DECK
from tests.games.harness import assert_refused, play_random


class WatchedBigTwo:
    """Big Two with every event checked against what its addressee may know."""

    def __getattr__(self, name: str) -> Any:
        return getattr(BIGTWO, name)

    def apply(self, state: BigTwoState, seat: int | None, action: dict[str, Any]) -> Any:
        new, events = BIGTWO.apply(state, seat, action)
        for ev in events:
            assert ev["to"] is None, "Big Two has no private events"
            if ev["type"] == "played":
                # a played card is public from the moment it is played
                assert set(ev["cards"]) <= set(new.played[-len(ev["cards"]) :])
            elif ev["type"] == "game_over":
                assert new.over and ev["hands"] == [list(h) for h in new.hands]
            else:
                assert not any(isinstance(v, (list, str)) and _has_card(v) for v in ev.values())
        return new, events


def _has_card(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return any(isinstance(x, str) and x in DECK for x in items)


def redealt(state: BigTwoState, seat: int | None, rng: random.Random) -> BigTwoState:
    """`state` with every card hidden from `seat` dealt again at random."""
    if state.over:
        return state
    hidden = [s for s in range(4) if s != seat]
    pool = [c for s in hidden for c in state.hands[s]]
    rng.shuffle(pool)
    hands = list(state.hands)
    for s in hidden:
        n = len(hands[s])
        hands[s], pool = tuple(pool[:n]), pool[n:]
    return state._replace(hands=tuple(hands))


def check(state: BigTwoState) -> None:
    assert Counter(BIGTWO.all_cards(state)) == Counter(DECK)
    for s in state.places[:-1] if state.over else state.places:
        assert not state.hands[s], "a placed seat still holds cards"
    if state.over:
        assert sorted(state.places) == [0, 1, 2, 3]
        assert sum(1 for h in state.hands if h) <= 1
    rng = random.Random(len(state.played) * 7 + len(state.passed))
    for seat in (0, 1, 2, 3, None):
        view = BIGTWO.view(state, seat)
        assert BIGTWO.view(redealt(state, seat, rng), seat) == view
        if seat is not None:
            assert view["hand"] == list(state.hands[seat])
            assert view["counts"] == [len(h) for h in state.hands]
        else:
            assert "hand" not in view
    if state.turn is not None:
        hand = list(state.hands[state.turn])
        legal = BIGTWO.legal_actions(state, state.turn)
        pick = rng.sample(hand, min(len(hand), rng.choice((1, 2, 3, 4, 5))))
        if not any(set(a.get("cards", ())) == set(pick) for a in legal):
            assert_refused(BIGTWO, state, state.turn, {"type": "play", "cards": pick})
        for action in rng.sample(legal, min(3, len(legal))):
            BIGTWO.apply(state, state.turn, action)  # every listed action is accepted
        if state.trick is None:
            assert {"type": "pass"} not in legal


@settings(max_examples=150)
@given(st.integers(0, 2**31), st.booleans())
def test_random_games_keep_every_invariant(seed: int, pass_locks: bool) -> None:
    final = play_random(WatchedBigTwo(), 4, {"pass_locks": pass_locks}, seed, check=check)  # type: ignore[arg-type]
    result = BIGTWO.result(final)
    assert result is not None
    assert sorted(result["scores"]) == [1, 2, 3, 4]
    assert BIGTWO.view(final, None)["hands"] == [list(h) for h in final.hands]
