"""Every move can be made with the keyboard (issue 21), in each game, at a
laptop's size: for each kind of move a table offers, a position where the
engine lists it is found by seeded random play, drawn in the real page, and
the move is made with Tab / Shift+Tab to reach each control (which must show
its focus ring), Space or Enter to press it and arrow keys on the cut's
slider - no mouse on the table.  The page must send the engine's move, and the
engine must accept it."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from app.games import GAMES
from tests.browser.conftest import Pages, shoot
from tests.browser.keys import keyboard_move, last_acted
from tests.browser.tables import draw, open_table
from tests.games.posso.checks import pick as keen_posso

pytestmark = pytest.mark.browser

NAMES = ["Ann", "Bob", "Cleo", "Dmitri"]
Wanted = Callable[[dict[str, Any], int, dict[str, Any]], bool]  # (view, seat, action)


def of(kind: str, **fields: Any) -> Wanted:
    return lambda view, seat, a: a["type"] == kind and all(a.get(k) == v for k, v in fields.items())


def extend_of(own: bool) -> Wanted:
    def wanted(view: dict[str, Any], seat: int, a: dict[str, Any]) -> bool:
        if a["type"] != "extend":
            return False
        owner = next(p["owner"] for p in view["properties"] if p["id"] == a["property"])
        return (owner == seat) is own

    return wanted


#: game -> (seats, options, the kinds of move its table offers)
GAMES_MOVES: dict[str, tuple[int, dict[str, Any], dict[str, Wanted]]] = {
    "posso": (
        3,
        {"start_hand": 2},
        {
            "cut": of("cut"),
            "call Posso": of("call_posso"),
            "pass": of("pass_posso"),
            "answer": of("answer_posso"),
            "draw from the stack": of("draw", source="stack"),
            "take the pile card": of("draw", source="pile"),
            "go down": of("go_down"),
            "play on": of("play_on"),
            "swap a wild": of("swap_wild"),
            "discard": of("discard"),
        },
    ),
    "possession": (
        3,
        {},
        {
            "pick up the stock": of("draw", source="stock"),
            "take the pile top": of("draw", source="pile"),
            "discard": of("discard"),
            "new property": of("meld", from_pile=0),
            "new property with pile cards": lambda v, s, a: a["type"] == "meld" and a["from_pile"],
            "add to my property": extend_of(True),
            "steal": extend_of(False),
            "keep everything": of("keep"),
            "fold": of("fold"),
        },
    ),
    "possum": (3, {}, {"play": of("play"), "draw": of("draw")}),
    "bigtwo": (4, {}, {"play": of("play"), "pass": of("pass")}),
}


def find_positions(name: str, seed: int) -> dict[str, tuple[Any, int, dict[str, Any]]]:
    """For each kind of move, a position where the engine lists one for the
    seat to act, from random games played from `seed` on."""
    game = GAMES[name]
    seats, options, kinds = GAMES_MOVES[name]
    found: dict[str, tuple[Any, int, dict[str, Any]]] = {}
    rng = random.Random(seed)
    for game_seed in range(seed, seed + 40):
        state = game.new_game(seats, options, game_seed)
        while game.result(state) is None and len(found) < len(kinds):
            acting = sorted(game.to_act(state))
            if not acting:
                state, _ = game.apply(state, None, {"type": "timeout"})
                continue
            seat = rng.choice(acting)
            legal = game.legal_actions(state, seat)
            view = game.view(state, seat)
            for kind, wanted in kinds.items():
                if kind not in found:
                    match = [a for a in legal if wanted(view, seat, a)]
                    if match:
                        found[kind] = (state, seat, rng.choice(match))
            action = keen_posso(rng, legal) if name == "posso" else rng.choice(legal)
            state, _ = game.apply(state, seat, action)
        if len(found) == len(kinds):
            return found
    missing = sorted(set(kinds) - set(found))
    raise AssertionError(f"seed {seed}: no {name} position offered {missing}")


def same_move(sent: dict[str, Any], listed: dict[str, Any]) -> bool:
    """The page sent the listed move (melds' cards in any order; a staged run
    may put its spare wilds elsewhere, which the engine also accepts)."""
    if sent.get("type") != listed["type"]:
        return False
    if listed["type"] == "go_down":
        laid = sorted((m["kind"], sorted(m["cards"])) for m in sent["melds"])
        return laid == sorted((m["kind"], sorted(m["cards"])) for m in listed["melds"])
    if listed["type"] == "meld":
        return (
            Counter(sent["cards"]) == Counter(listed["cards"])
            and sent["from_pile"] == listed["from_pile"]
        )
    if listed["type"] == "extend":
        return sent["property"] == listed["property"] and Counter(sent["cards"]) == Counter(
            listed["cards"]
        )
    if listed["type"] == "cut":
        return 0 <= sent["at"] <= 1
    return sent == listed


@pytest.mark.parametrize("name", list(GAMES_MOVES))
def test_every_kind_of_move_can_be_made_with_the_keyboard(pages: Pages, name: str) -> None:
    seed = 2121
    game = GAMES[name]
    positions = find_positions(name, seed)
    page = open_table(pages)
    seats = GAMES_MOVES[name][0]
    for kind, (state, seat, action) in positions.items():
        view = game.view(state, seat)
        draw(page, name, view, game.legal_actions(state, seat), NAMES[:seats], seat)
        page.evaluate("() => { document.activeElement?.blur(); window.acted = []; }")
        keyboard_move(page, name, action, view)
        sent = last_acted(page)
        assert sent is not None and same_move(sent, action), (
            f"seed {seed}, {name}, {kind}: the keyboard sent {sent}, the engine listed {action}"
        )
        after, _ = game.apply(state, seat, sent)  # the engine takes what the keyboard sent
        # The next view leaves the focus on the table (on the same control, or
        # on the table itself if the move took that control away), not at the
        # top of the page: the next Tab goes on from there.
        draw(page, name, game.view(after, seat), [], NAMES[:seats], seat)
        where = page.evaluate("() => document.activeElement.closest('.felt') !== null")
        assert where, f"{name}, {kind}: the focus left the table after the move"
    shoot(page, f"issue21-keyboard-{name}-laptop")
