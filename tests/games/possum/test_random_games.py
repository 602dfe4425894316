"""Random Possum games for 2-6 seats under every combination of options:
no exception, cards conserved, refused actions change nothing, no view or
event shows a seat a card it may not know, and every game ends."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.games import cards
from app.games.possum import POSSUM
from app.games.possum.engine import full_deck
from app.games.possum.model import PossumState
from tests.games.harness import assert_refused, play_random

OPTION_NAMES = ("multiply", "multi", "no_face_cards", "single_draw")


class WatchedPossum:
    """Possum with every event checked against what its addressee may know."""

    def __getattr__(self, name: str) -> Any:
        return getattr(POSSUM, name)

    def apply(self, state: PossumState, seat: int | None, action: dict[str, Any]) -> Any:
        new, events = POSSUM.apply(state, seat, action)
        for ev in events:
            if ev["type"] == "drew_card":
                # the only private event: the drawer learns its own card
                assert ev["to"] == seat and ev["seat"] == seat
                assert ev["card"] in new.hands[seat]
                continue
            assert ev["to"] is None
            if ev["type"] == "played":
                n = len(ev["cards"])
                assert list(new.pile[-n:]) == ev["cards"] and ev["top"] == new.pile[-1]
            elif ev["type"] == "game_over":
                assert new.over and ev["hands"] == [list(h) for h in new.hands]
            else:
                assert not any(_is_card(v) for v in ev.values()), ev
        return new, events


def _is_card(value: Any) -> bool:
    try:
        cards.validate(value)
    except cards.CardError:
        return False
    return True


def redealt(state: PossumState, seat: int | None, rng: random.Random) -> PossumState:
    """`state` with every card hidden from `seat` dealt again at random: other
    hands, the draw pile's order and the pile under its top card."""
    if state.over:
        return state
    others = [s for s in range(len(state.hands)) if s != seat]
    pool = [c for s in others for c in state.hands[s]] + list(state.draw) + list(state.pile[:-1])
    rng.shuffle(pool)
    hands = list(state.hands)
    for s in others:
        n = len(hands[s])
        hands[s], pool = tuple(pool[:n]), pool[n:]
    draw, pool = tuple(pool[: len(state.draw)]), pool[len(state.draw) :]
    return replace(state, hands=tuple(hands), draw=draw, pile=(*pool, state.pile[-1]))


def checker(full: Counter[str]) -> Any:
    def check(state: PossumState) -> None:
        assert Counter(POSSUM.all_cards(state)) == full
        assert state.pile, "the pile always has a top card"
        seats = len(state.hands)
        rng = random.Random(len(state.pile) * 31 + len(state.draw))
        for seat in [*range(seats), None]:
            view = POSSUM.view(state, seat)
            assert POSSUM.view(redealt(state, seat, rng), seat) == view
            assert ("hand" in view) == (seat is not None)
        if state.over:
            return
        turn = state.turn
        assert turn is not None
        legal = POSSUM.legal_actions(state, turn)
        plays = [a for a in legal if a["type"] == "play"]
        assert plays or legal == [{"type": "draw"}]
        if plays:
            assert_refused(POSSUM, state, turn, {"type": "draw"})
        hand = list(state.hands[turn])
        pick = rng.sample(hand, min(len(hand), rng.choice((1, 2, 3, 4))))
        listed = {(tuple(sorted(Counter(a["cards"]).items())), a["cards"][-1]) for a in plays}
        if (tuple(sorted(Counter(pick).items())), pick[-1]) not in listed:
            assert_refused(POSSUM, state, turn, {"type": "play", "cards": pick})
        for action in rng.sample(legal, min(3, len(legal))):
            POSSUM.apply(state, turn, action)  # every listed action is accepted

    return check


@settings(max_examples=160)
@given(st.integers(2, 6), st.integers(0, 15), st.integers(0, 2**31))
def test_random_games_keep_every_invariant(seats: int, flags: int, seed: int) -> None:
    options = {name: bool(flags >> i & 1) for i, name in enumerate(OPTION_NAMES)}
    full = Counter(full_deck(seats, POSSUM.Options(**options)))
    final = play_random(WatchedPossum(), seats, options, seed, check=checker(full))  # type: ignore[arg-type]
    result = POSSUM.result(final)
    assert result is not None
    assert result["scores"] == [len(h) for h in final.hands]
    placed = sorted(s for place in result["places"] for s in place)
    assert placed == list(range(seats))
    if final.winner is not None:
        assert result["places"][0] == [final.winner] and not final.hands[final.winner]
    else:
        assert final.stalled
