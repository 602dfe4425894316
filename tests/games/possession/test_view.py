"""What each seat sees, and the proof that it sees nothing more.

The leak tests re-deal every card hidden from a viewer (the other hands, the
stock and its order, the pile below the ajar run) and demand the same view and
the same events: if anything a viewer receives depended on a hidden card, some
re-deal would change it.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.base import Event
from app.games.cards import sort_key
from app.games.possession.combos import ajar_depth
from app.games.possession.model import PossessionState
from tests.games.possession.driver import random_game
from tests.games.possession.helpers import G, pass_turn, play, start

COMMON = {"game", "seat", "seats", "phase", "to_act", "turn", "dealer", "counts", "over", "result"}


def test_views_have_the_common_keys_and_are_json() -> None:
    state = G.new_game(3, {}, 8)
    for viewer in (0, 1, 2, None):
        view = G.view(state, viewer)
        json.dumps(view)
        assert view.keys() >= COMMON
        assert ("hand" in view) == (viewer is not None) and "hands" not in view
        assert view["phase"] == "play" and view["to_act"] == [state.turn]
        assert view["pile"] == list(state.pile) and view["pile_size"] == 1
        assert view["stock"] == 24 and view["counts"] == [9, 9, 9]
        assert view["drawn"] is False and view["last_card"] is False
    assert G.view(state, 1)["hand"] == list(state.hands[1])


def test_the_ajar_pile_shows_the_run_and_open_pile_shows_everything() -> None:
    hands = ["QS KC AC 3C 5C 7C 9C JC 2H", "9H AD 3D 5D 7D 9D JD KD 4H"]
    moves = [
        (0, "draw", {"source": "stock"}),
        (0, "discard", {"card": "QS"}),
        (1, "draw", {"source": "stock"}),
        (1, "discard", {"card": "JD"}),
        (0, "draw", {"source": "stock"}),
        (0, "discard", {"card": "JC"}),
    ]
    state = play(start(hands, "KS", dealer=1), *moves)
    view = G.view(state, 1)
    assert view["pile"] == ["JD", "JC"] and view["pile_size"] == 4
    state = play(start(hands, "KS", dealer=1, open_pile=True), *moves)
    view = G.view(state, 1)
    assert view["pile"] == ["KS", "QS", "JD", "JC"] and view["options"]["open_pile"]


def test_properties_carry_id_owner_kind_cards_and_secured() -> None:
    hands = ["AH 2H 3H 4H 5H 6H 9C JC KC", "AD 3D 5D 9D JD KD 4S 8S QS"]
    state = start(hands, "7H", dealer=1)
    state = play(
        state, (0, "draw", {"source": "stock"}), (0, "meld", {"cards": ["AH", "2H", "3H"]})
    )
    view = G.view(state, None)
    assert view["properties"] == [
        {"id": "p1", "owner": 0, "kind": "run", "cards": ["AH", "2H", "3H"], "secured": False}
    ]
    assert view["scores"] == [3, 0] and view["turn"] == 1
    state = pass_turn(state)
    assert G.view(state, None)["properties"][0]["owner"] == 0


# -- leak tests --------------------------------------------------------------------------


def redeal(
    state: PossessionState, viewer: int | None, rng: random.Random, keep: int | None = None
) -> PossessionState | None:
    """Shuffle every card `viewer` cannot see (sparing seat `keep`'s hand),
    keeping every count and the ajar run exactly as the viewer saw it."""
    n = state.rules.seats
    shown = len(state.pile) if state.rules.open_pile else ajar_depth(state.pile)
    buried = list(state.pile[: len(state.pile) - shown])
    visible = state.pile[len(state.pile) - shown :]
    hidden = [s for s in range(n) if s not in (viewer, keep)]
    pool = [c for s in hidden for c in state.hands[s]] + list(state.stock) + buried
    for _ in range(30):
        rng.shuffle(pool)
        rest = iter(pool)
        hands = list(state.hands)
        for s in hidden:
            hands[s] = tuple(sorted((next(rest) for _ in state.hands[s]), key=sort_key))
        stock = tuple(next(rest) for _ in state.stock)
        pile = (*(next(rest) for _ in buried), *visible)
        if state.rules.open_pile or ajar_depth(pile) == shown:
            return replace(state, hands=tuple(hands), stock=stock, pile=pile)
    return None


CARD_FIELDS = {"card", "cards", "from_hand", "pile_cards"}


def cards_in(obj: Any, out: set[str]) -> set[str]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "hands":
                for h in v:
                    out.update(h)
            elif k in CARD_FIELDS:
                out.update([v] if isinstance(v, str) else v)
            else:
                cards_in(v, out)
    elif isinstance(obj, list):
        for v in obj:
            cards_in(v, out)
    return out


def known(view: dict[str, Any]) -> set[str]:
    out = set(view.get("hand", [])) | set(view["pile"])
    for p in view["properties"]:
        out.update(p["cards"])
    for h in view.get("hands", []):
        out.update(h)
    return out


def seen_by(events: list[Event], viewer: int | None) -> list[Event]:
    return [e for e in events if e["to"] is None or e["to"] == viewer]


def without_final_hands(events: list[Event]) -> list[Event]:
    """Events with the end-of-game show of hands left out (everyone sees all then)."""
    return [
        {k: v for k, v in e.items() if k != "hands"} for e in events if e["type"] != "drew_card"
    ]


OPTIONS = st.fixed_dictionaries(
    {}, optional={"open_pile": st.booleans(), "distinct_suit_sets": st.booleans()}
)


@settings(max_examples=12)
@given(seed=st.integers(0, 10**6), seats=st.sampled_from([2, 3, 4]), options=OPTIONS)
def test_no_view_or_event_shows_a_hidden_card(
    seed: int, seats: int, options: dict[str, Any]
) -> None:
    rng = random.Random(seed)
    viewers: list[int | None] = [*range(seats), None]
    for step, (before, actor, action, after, events) in enumerate(
        random_game(seats, options, seed)
    ):
        for viewer in viewers:
            view_before = G.view(before, viewer)
            view_after = G.view(after, viewer)
            # Every card an event shows this viewer was or is now in plain sight,
            # or was played face up by the action itself.
            shown = cards_in(seen_by(events, viewer), set())
            played = cards_in(action, set())
            assert shown <= known(view_before) | known(view_after) | played, (viewer, events)
            if step % 3:
                continue
            # The same position with the hidden cards re-dealt looks the same...
            other = redeal(before, viewer, rng)
            if other is not None:
                assert G.view(other, viewer) == view_before
            # ...and the same action tells this viewer exactly the same things.
            other = redeal(before, viewer, rng, keep=actor)
            if other is None:
                continue
            again = G.apply(other, actor, action)[1]
            mine = without_final_hands(seen_by(events, viewer))
            theirs = without_final_hands(seen_by(again, viewer))
            assert mine == theirs, (viewer, action)
