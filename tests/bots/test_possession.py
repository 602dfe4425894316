"""The Possession bot: always legal, and the plays its brief asks for."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from app.bots.base import RandomBot
from app.bots.possession import PossessionBot
from app.games.cards import sort_key
from app.games.possession import POSSESSION as G
from app.games.possession.model import PossessionState, Property

BOT = PossessionBot()


def position(
    hands: list[str],
    props: Sequence[tuple[int, str, str]] = (),
    pile: str = "",
    phase: str = "play",
    drawn: bool = True,
    folded: tuple[int, ...] = (),
) -> PossessionState:
    """A table laid out by hand for seat 0 to move (the bot sees only its view)."""
    base = G.new_game(len(hands), {"first_dealer": 0}, 1)
    return replace(
        base,
        hands=tuple(tuple(sorted(h.split(), key=sort_key)) for h in hands),
        properties=tuple(
            Property(f"p{i + 1}", owner, kind, tuple(cards.split()))
            for i, (owner, kind, cards) in enumerate(props)
        ),
        next_id=len(props) + 1,
        pile=tuple(pile.split()),
        stock=() if phase == "showdown" else base.stock,
        phase=phase,
        turn=0,
        drawn=drawn,
        folded=folded,
        open_season=len(folded) == len(hands) - 1,
    )


def choices(state: PossessionState) -> list[dict[str, Any]]:
    """The bot's picks under several rng seeds (it breaks ties at random)."""
    legal = G.legal_actions(state, 0)
    picks = [BOT.choose(G.view(state, 0), legal, 0, random.Random(i)) for i in range(8)]
    assert all(p in legal for p in picks)
    return picks


def choice(state: PossessionState) -> dict[str, Any]:
    picks = choices(state)
    assert all(p == picks[0] for p in picks), picks
    return picks[0]


OPPONENT = "2H 3S 5C 9D JH KC QD 10S 6H"


def test_makes_a_property_when_it_can() -> None:
    state = position(["7C 7D 7H 2S 5H 9D JC KS QD 4C", OPPONENT])
    action = choice(state)
    assert action["type"] == "meld" and sorted(action["cards"]) == ["7C", "7D", "7H"]


def test_steals_when_it_can() -> None:
    state = position(["7D 2S 5H 9C JC KS QH 4C 10H", OPPONENT], [(1, "run", "4D 5D 6D")])
    assert choice(state) == {"type": "extend", "property": "p1", "cards": ["7D"]}


def test_extends_its_own_property() -> None:
    state = position(["7D 2S 5H 9C JC KS QH 4C 10H", OPPONENT], [(0, "run", "4D 5D 6D")])
    assert choice(state) == {"type": "extend", "property": "p1", "cards": ["7D"]}


def test_takes_the_pile_top_when_it_steals_and_the_stock_otherwise() -> None:
    hand = "2S 5H 9C JC KS QH 4C 10H AD"
    state = position([hand, OPPONENT], [(1, "run", "4D 5D 6D")], pile="7D", drawn=False)
    assert choice(state) == {"type": "draw", "source": "pile"}
    state = position([hand, OPPONENT], [(1, "run", "4D 5D 6D")], pile="8S", drawn=False)
    assert choice(state) == {"type": "draw", "source": "stock"}


def test_holds_an_end_rather_than_feed_it() -> None:
    # 4-5-6D is safe below (3D is in a set) while the bot holds 7D: it neither
    # plays nor discards the 7D, since either would hand over the 8D steal.
    state = position(
        ["7D 2S KH 9C", OPPONENT],
        [(0, "run", "4D 5D 6D"), (1, "set", "3C 3D 3H")],
    )
    for action in choices(state):
        assert action["type"] == "discard" and action["card"] != "7D"


def test_does_not_discard_a_card_that_builds_on_the_visible_pile() -> None:
    # 9S or 10H on the 9H leaves a pair or a near-run one card from a property.
    state = position(["9S 10H 2C 5D", OPPONENT], pile="3S 9H")
    for action in choices(state):
        assert action["type"] == "discard" and action["card"] in ("2C", "5D")


def test_does_not_discard_a_card_an_opponent_can_add() -> None:
    state = position(
        ["8S 2C 6D QH KD", OPPONENT],
        [(1, "set", "8C 8D 8H"), (0, "run", "JS QS KS")],
    )
    # 8S would steal the set: the bot takes it, and never throws it away.
    assert choice(state) == {"type": "extend", "property": "p1", "cards": ["8S"]}


def test_folds_in_the_showdown_rather_than_expose_a_held_property() -> None:
    # The classic example: A..8 of clubs, holding the 9 and a useless K.
    run = "AC 2C 3C 4C 5C 6C 7C 8C"
    state = position(["9C KH", OPPONENT], [(0, "run", run)], phase="showdown")
    assert {"type": "extend", "property": "p1", "cards": ["9C"]} in G.legal_actions(state, 0)
    assert choice(state) == {"type": "fold"}
    # In open season nobody is left to steal it, so the 9 goes on.
    alone = position(["9C KH", OPPONENT], [(0, "run", run)], phase="showdown", folded=(1,))
    assert choice(alone) == {"type": "extend", "property": "p1", "cards": ["9C"]}


def test_showdown_makes_a_property_nobody_can_steal() -> None:
    state = position(["7C 7D 7H KH", OPPONENT], [(1, "run", "6S 7S 8S")], phase="showdown")
    action = choice(state)
    assert action["type"] == "meld" and sorted(action["cards"]) == ["7C", "7D", "7H"]


def play_out(seats: int, options: dict[str, Any], seed: int, bots: list[Any]) -> Any:
    state = G.new_game(seats, options, seed)
    rng = random.Random(seed)
    for _ in range(3000):
        if G.is_over(state):
            return state
        seat = state.turn
        assert seat is not None
        legal = G.legal_actions(state, seat)
        action = bots[seat].choose(G.view(state, seat), legal, seat, rng)
        assert action in legal
        state, _ = G.apply(state, seat, action)
    raise AssertionError("bots did not finish")


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_bots_only_games_finish_with_legal_moves(seats: int) -> None:
    for seed in range(6):
        options = {"open_pile": seed % 2 == 1, "distinct_suit_sets": seed % 3 == 0}
        assert G.result(play_out(seats, options, seed, [BOT] * seats)) is not None


def test_beats_random_play_heads_up() -> None:
    wins = 0
    for seed in range(30):
        final = play_out(2, {}, seed, [BOT, RandomBot()])
        result = G.result(final)
        assert result is not None
        wins += result["places"][0] == [0]
    assert wins >= 20
