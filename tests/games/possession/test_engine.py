"""Scenario tests on stacked deals: each plays a rule of docs/games/possession.md via `apply`."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.possession.model import OVER, PLAY, SHOWDOWN
from tests.games.harness import assert_refused
from tests.games.possession.helpers import (
    G,
    act,
    drawn_card,
    pass_turn,
    play,
    run_down,
    start,
    turn,
)


def code(state: Any, seat: int | None, action: Any) -> str:
    return assert_refused(G, state, seat, action)


def prop(state: Any, pid: str) -> Any:
    return next(p for p in state.properties if p.id == pid)


# -- turn flow -----------------------------------------------------------------


def test_pick_up_first_then_exactly_one_put_down() -> None:
    state = G.new_game(2, {}, 3)
    seat = turn(state)
    other = 1 - seat
    card = state.hands[seat][0]
    assert G.legal_actions(state, seat) == [
        {"type": "draw", "source": "stock"},
        {"type": "draw", "source": "pile"},
    ]
    assert G.legal_actions(state, other) == []
    assert code(state, seat, {"type": "discard", "card": card}) == "draw_first"
    assert code(state, other, {"type": "draw", "source": "stock"}) == "not_your_turn"
    assert code(state, seat, {"type": "keep"}) == "draw_first"
    assert code(state, seat, {"type": "fold"}) == "no_fold"
    upturn = state.pile[-1]
    state, events = act(state, seat, "draw", source="pile")
    assert events == [{"type": "drew", "to": None, "seat": seat, "source": "pile", "card": upturn}]
    assert upturn in state.hands[seat] and state.pile == () and state.drawn
    assert code(state, seat, {"type": "draw", "source": "stock"}) == "already_drew"
    assert code(state, seat, {"type": "keep"}) == "no_keep"
    state, events = act(state, seat, "discard", card=card)
    assert events == [{"type": "discarded", "to": None, "seat": seat, "card": card}]
    assert state.turn == other and not state.drawn and state.pile == (card,)
    assert len(state.hands[seat]) == 9


def test_a_stock_draw_shows_the_card_only_to_the_drawer() -> None:
    state = G.new_game(2, {}, 4)
    seat = turn(state)
    top = state.stock[-1]
    state, events = act(state, seat, "draw", source="stock")
    public = [e for e in events if e["to"] is None]
    private = [e for e in events if e["to"] is not None]
    assert public == [{"type": "drew", "to": None, "seat": seat, "source": "stock", "stock": 32}]
    assert private == [
        {"type": "drew_card", "to": seat, "seat": seat, "source": "stock", "card": top}
    ]


SEVENS = ["7C 7D AS 3S 5S 9S JS KS 2H", "AD 3D 5D 9D JD KD 4H 6H 8H"]


def test_when_the_pile_is_empty_the_next_player_must_take_the_stock() -> None:
    state = start(SEVENS, "7H", dealer=1)
    assert state.turn == 0  # two sevens
    state, _ = act(state, 0, "draw", source="stock")
    state, events = act(state, 0, "meld", cards=["7C", "7D"], from_pile=1)
    assert events[0]["pile_cards"] == ["7H"] and state.pile == ()
    assert state.turn == 1
    assert G.legal_actions(state, 1) == [{"type": "draw", "source": "stock"}]
    assert code(state, 1, {"type": "draw", "source": "pile"}) == "pile_empty"
    # No discard after a property move: the turn has passed.
    assert code(state, 0, {"type": "discard", "card": "AS"}) == "not_your_turn"


# -- new properties with pile cards -----------------------------------------------


@pytest.mark.parametrize(
    ("upturn", "first", "second"),
    [("2S", "4S", "5S"), ("5S", "2S", "4S")],  # pile 5 (top), 4, 2 / 4 (top), 2, 5
)
def test_a_3_of_spades_makes_a_property_with_three_pile_cards(
    upturn: str, first: str, second: str
) -> None:
    hands = [
        f"3S {first} AC 3C 5C 7C 9C JC KC",
        f"{second} AD 3D 6D 8D 10D QD 4H 6H",
    ]
    state = start(hands, upturn, dealer=1)
    assert state.turn == 0
    state = play(
        state,
        (0, "draw", {"source": "stock"}),
        (0, "discard", {"card": first}),
        (1, "draw", {"source": "stock"}),
        (1, "discard", {"card": second}),
        (0, "draw", {"source": "stock"}),
    )
    assert G.view(state, 0)["pile"] == [upturn, first, second]
    meld = {"type": "meld", "cards": ["3S"], "from_pile": 3}
    assert meld in G.legal_actions(state, 0)
    state, events = G.apply(state, 0, meld)
    p1 = prop(state, "p1")
    assert p1.owner == 0 and p1.kind == "run" and p1.cards == ("2S", "3S", "4S", "5S")
    assert state.pile == () and "3S" not in state.hands[0]
    assert events[0]["property"]["cards"] == ["2S", "3S", "4S", "5S"]


def test_buried_pile_cards_cannot_join_and_the_refusal_names_none_of_them() -> None:
    hands = ["QS KC AC 3C 5C 7C 9C JC 2H", "9H AD 3D 5D 7D 9D JD KD 4H"]
    state = start(hands, "KS", dealer=1)  # QS is one from KS: seat 0 starts
    state = play(
        state,
        (0, "draw", {"source": "stock"}),
        (0, "discard", {"card": "QS"}),
        (1, "draw", {"source": "stock"}),
        (1, "discard", {"card": "9H"}),
        (0, "draw", {"source": "stock"}),
    )
    assert G.view(state, 0)["pile"] == ["9H"]  # KS, QS buried beneath
    for k in (2, 3):
        before = state
        with pytest.raises(Exception) as err:
            G.apply(state, 0, {"type": "meld", "cards": ["JC"], "from_pile": k})
        message = str(err.value)
        assert "KS" not in message and "QS" not in message
        assert state == before
    assert code(state, 0, {"type": "meld", "cards": ["JC"], "from_pile": 2}) == "not_a_property"
    assert code(state, 0, {"type": "meld", "cards": ["JC"], "from_pile": 9}) == "bad_pile_count"
    assert (
        code(state, 0, {"type": "meld", "cards": ["JC", "KC"], "from_pile": 0}) == "not_a_property"
    )


# -- joining and keeping apart ------------------------------------------------------

HEARTS = ["AH 2H 3H 4H 5H 6H 9C JC KC", "AD 3D 5D 9D JD KD 4S 8S QS"]


def hearts_after_a23() -> Any:
    state = start(HEARTS, "7H", dealer=1)
    assert state.turn == 0
    state = play(
        state, (0, "draw", {"source": "stock"}), (0, "meld", {"cards": ["AH", "2H", "3H"]})
    )
    state = pass_turn(state)
    state, _ = act(state, 0, "draw", source="stock")
    return state


def test_a23_then_456_laid_as_a_new_property_stay_apart() -> None:
    state = hearts_after_a23()
    state, _ = act(state, 0, "meld", cards=["4H", "5H", "6H"])
    assert [(p.id, p.cards) for p in state.properties] == [
        ("p1", ("AH", "2H", "3H")),
        ("p2", ("4H", "5H", "6H")),
    ]
    secured = {p["id"]: p["secured"] for p in G.view(state, 1)["properties"]}
    assert secured == {"p1": True, "p2": False}


def test_456_added_to_a23_joins_them_for_good() -> None:
    state = hearts_after_a23()
    add = {"type": "extend", "property": "p1", "cards": ["4H", "5H", "6H"]}
    assert add in G.legal_actions(state, 0)
    state, events = G.apply(state, 0, add)
    assert [(p.id, p.cards) for p in state.properties] == [
        ("p1", ("AH", "2H", "3H", "4H", "5H", "6H"))
    ]
    assert events[0]["type"] == "added" and events[0]["cards"] == ["4H", "5H", "6H"]


# -- stealing -----------------------------------------------------------------------

STEAL = ["7D 8D 3D AC 3C 5C 9C JC KC", "4D 5D 6D AS 3S 5S 9S JS KS"]


def test_4_5_6_is_stolen_with_7_8_but_not_with_3_and_7() -> None:
    state = start(STEAL, "9D", dealer=1)
    assert state.turn == 0  # 8D is nearest the 9D
    state = pass_turn(state)
    state = play(
        state, (1, "draw", {"source": "stock"}), (1, "meld", {"cards": ["6D", "4D", "5D"]})
    )
    state, _ = act(state, 0, "draw", source="stock")
    refused = {"type": "extend", "property": "p1", "cards": ["3D", "7D"]}
    assert refused not in G.legal_actions(state, 0)
    assert code(state, 0, refused) == "one_end_only"
    steal = {"type": "extend", "property": "p1", "cards": ["7D", "8D"]}
    assert steal in G.legal_actions(state, 0)
    assert {"type": "extend", "property": "p1", "cards": ["3D"]} in G.legal_actions(state, 0)
    state, events = G.apply(state, 0, steal)
    p1 = prop(state, "p1")
    assert p1.owner == 0 and p1.cards == ("4D", "5D", "6D", "7D", "8D")
    assert events[0]["type"] == "stole" and events[0]["victim"] == 1
    assert G.view(state, 1)["scores"] == [5, 0]
    assert state.turn == 1


def test_nothing_wraps_past_k_or_before_a() -> None:
    hands = ["JD QD KD AD AC 2C 3C KC 9S", "4D 5D 6D AS 3S 5S 7S JS 4H"]
    state = start(hands, "10D", dealer=1)
    state = play(
        state, (0, "draw", {"source": "stock"}), (0, "meld", {"cards": ["JD", "QD", "KD"]})
    )
    state = pass_turn(state)
    state, _ = act(state, 0, "draw", source="stock")
    assert code(state, 0, {"type": "extend", "property": "p1", "cards": ["AD"]}) == "no_wrap"
    state, _ = act(state, 0, "meld", cards=["AC", "2C", "3C"])
    state = pass_turn(state)
    state, _ = act(state, 0, "draw", source="stock")
    assert code(state, 0, {"type": "extend", "property": "p2", "cards": ["KC"]}) == "no_wrap"
    legal = G.legal_actions(state, 0)
    assert {"type": "extend", "property": "p2", "cards": ["KC"]} not in legal
    assert {"type": "extend", "property": "p1", "cards": ["AD"]} not in legal


# -- the end of the stock ---------------------------------------------------------------

SHOWDOWN_HANDS = ["7D JS QS KS 9H 2C 4C 6S 8H", "4D 5D 6D AC 3H 8S 10C QH 2S"]


def showdown_table(last: str = "keep") -> Any:
    """Seat 1 lays 4-5-6D; the stock runs down; seat 0 draws the last card (6C)."""
    state = start(SHOWDOWN_HANDS, "9C", stock="5C KH", stock_end="2H 10D 6C", dealer=1)
    assert state.turn == 0
    state = pass_turn(state)
    state = play(
        state, (1, "draw", {"source": "stock"}), (1, "meld", {"cards": ["4D", "5D", "6D"]})
    )
    state = run_down(state)
    assert state.turn == 0 and len(state.stock) == 1
    state, events = act(state, 0, "draw", source="stock")
    assert drawn_card(events) == "6C" and state.stock == ()
    assert {"type": "last_card", "to": None, "seat": 0} in events
    assert G.view(state, 0)["last_card"] is True
    return state


def test_the_last_card_may_be_kept_and_the_showdown_starts_with_the_next_seat() -> None:
    state = showdown_table()
    legal = G.legal_actions(state, 0)
    assert {"type": "keep"} in legal
    assert {"type": "discard", "card": "6C"} in legal
    state, events = act(state, 0, "keep")
    assert [e["type"] for e in events] == ["kept", "showdown"]
    assert state.phase == SHOWDOWN and state.turn == 1 and len(state.hands[0]) == 10


def test_a_last_card_that_steals_counts_for_the_stealer() -> None:
    state = showdown_table()
    state, events = act(state, 0, "extend", property="p1", cards=["7D"])
    assert [e["type"] for e in events] == ["stole", "showdown"]
    assert state.phase == SHOWDOWN and state.turn == 1
    state = play(state, (1, "fold"), (0, "fold"))
    assert G.result(state) == {"places": [[0], [1]], "scores": [4, 0]}


def test_showdown_forced_fold_then_open_season_on_the_folded_estate() -> None:
    state = showdown_table()
    state, _ = act(state, 0, "keep")
    assert G.legal_actions(state, 1) == [{"type": "fold"}]  # no move: the fold is forced
    assert code(state, 1, {"type": "draw", "source": "stock"}) == "no_drawing"
    assert code(state, 1, {"type": "discard", "card": "AC"}) == "no_discarding"
    state, events = act(state, 1, "fold")
    assert [e["type"] for e in events] == ["folded", "open_season"]
    assert state.folded == (1,) and state.open_season and state.turn == 0
    # The folded hand stays hidden from everyone until the game ends.
    for viewer in (0, None):
        view = G.view(state, viewer)
        assert "hands" not in view and view["counts"][1] == 7 and view["folded"] == [1]
    assert code(state, 1, {"type": "fold"}) == "not_your_turn"
    # Open season: seat 0 plays alone and steals from the folded estate.
    state, events = act(state, 0, "extend", property="p1", cards=["7D"])
    assert events[0]["type"] == "stole" and state.turn == 0
    state, _ = act(state, 0, "meld", cards=["JS", "QS", "KS"])
    assert state.turn == 0 and state.phase == SHOWDOWN
    state, events = act(state, 0, "fold")
    assert state.phase == OVER and events[-1]["reason"] == "all_folded"
    assert G.result(state) == {"places": [[0], [1]], "scores": [7, 0]}
    view = G.view(state, None)
    assert view["over"] and view["hands"][1] == list(state.hands[1])


def test_equal_estates_share_the_place() -> None:
    state = showdown_table()
    state = play(
        state, (0, "keep"), (1, "fold"), (0, "meld", {"cards": ["JS", "QS", "KS"]}), (0, "fold")
    )
    assert G.result(state) == {"places": [[0, 1]], "scores": [3, 3]}


def test_sudden_finish_by_a_steal_and_the_stolen_property_counts() -> None:
    hands = ["7S 7H 7D 8S 8H 8D 9S 9H 9D", "4C 5C 6C AD 2D 3S 5H JH KS"]
    stock = "10S QC 10H QD 10D QS 7C JC 8C"
    state = start(hands, "9C", stock=stock, dealer=1)
    assert state.turn == 0
    state = play(
        state,
        (0, "draw", {"source": "stock"}),
        (0, "meld", {"cards": ["7S", "7H", "7D"]}),
        (1, "draw", {"source": "stock"}),
        (1, "meld", {"cards": ["4C", "5C", "6C"]}),
        (0, "draw", {"source": "stock"}),
        (0, "meld", {"cards": ["8S", "8H", "8D"]}),
        (1, "draw", {"source": "stock"}),
        (1, "discard", {"card": "QD"}),
        (0, "draw", {"source": "stock"}),
        (0, "meld", {"cards": ["9S", "9H", "9D"]}),
        (1, "draw", {"source": "stock"}),
        (1, "discard", {"card": "QS"}),
        (0, "draw", {"source": "stock"}),
        (0, "meld", {"cards": ["10S", "10H", "10D"]}),
        (1, "draw", {"source": "stock"}),
        (1, "discard", {"card": "JC"}),
        (0, "draw", {"source": "stock"}),
    )
    assert state.hands[0] == ("7C", "8C") and state.phase == PLAY
    state, events = act(state, 0, "extend", property="p2", cards=["8C", "7C"])
    assert [e["type"] for e in events] == ["stole", "game_over"]
    assert events[-1]["reason"] == "emptied" and events[-1]["seat"] == 0
    assert state.phase == OVER and G.to_act(state) == set()
    assert G.result(state) == {"places": [[0], [1]], "scores": [17, 0]}
    assert G.legal_actions(state, 1) == []
    assert code(state, 1, {"type": "draw", "source": "stock"}) == "game_over"


def test_three_players_turn_the_pile_over_once_then_the_showdown() -> None:
    state = G.new_game(3, {"first_dealer": 0}, 21)
    upturn = state.pile[0]
    state = run_down(state)
    seat = turn(state)
    state, events = act(state, seat, "draw", source="stock")
    assert not any(e["type"] == "last_card" for e in events)
    assert {"type": "keep"} not in G.legal_actions(state, seat)
    assert code(state, seat, {"type": "keep"}) == "no_keep"
    card = drawn_card(events)
    pile = (*state.pile, card)
    state, events = act(state, seat, "discard", card=card)
    assert events[-1] == {"type": "turned_over", "to": None, "stock": len(pile)}
    assert state.turned_over and state.pile == () and state.phase == PLAY
    assert state.stock == tuple(reversed(pile))
    nxt = (seat + 1) % 3
    assert state.turn == nxt
    assert G.legal_actions(state, nxt) == [{"type": "draw", "source": "stock"}]
    state, events = act(state, nxt, "draw", source="stock")
    assert drawn_card(events) == upturn  # the pile's bottom card comes up first
    state, _ = act(state, nxt, "discard", card=upturn)
    state = run_down(state)
    seat = turn(state)
    state, events = act(state, seat, "draw", source="stock")
    assert any(e["type"] == "last_card" for e in events)
    state, events = act(state, seat, "keep")
    assert events[-1] == {"type": "showdown", "to": None, "seat": (seat + 1) % 3}
    assert state.phase == SHOWDOWN and state.turned_over


def test_voluntary_fold_with_moves_left_and_play_skips_folded_seats() -> None:
    state = G.new_game(3, {"first_dealer": 0}, 21)
    state = pass_turn(run_down(state))
    assert state.turned_over
    state = run_down(state)
    seat = turn(state)
    state, _ = act(state, seat, "draw", source="stock")
    state, _ = act(state, seat, "keep")
    first = turn(state)
    assert {"type": "fold"} in G.legal_actions(state, first)
    state, events = act(state, first, "fold")
    assert events == [{"type": "folded", "to": None, "seat": first}]
    assert state.turn == (first + 1) % 3 and not state.open_season
    second = turn(state)
    state, events = act(state, second, "fold")
    assert events[-1] == {"type": "open_season", "to": None, "seat": seat}
    assert state.turn == seat


# -- four players, two decks --------------------------------------------------------------

FOURS = [
    "7H 7H 7C 7C 7D 7D 7S 7S 8C",
    "AC 2C 3C 4C 5C 6C 9C 10C JC",
    "AS 2S 3S 4S 5S 6S 9S 10S JS",
    "AD 2D 3D 4D 5D 6D 9D 10D JD",
]


def test_four_players_sets_of_identical_cards_grow_to_a_secured_eight() -> None:
    state = start(FOURS, "8H", dealer=3)
    assert state.turn == 0
    state, _ = act(state, 0, "draw", source="stock")
    assert code(state, 0, {"type": "meld", "cards": ["7H", "7H", "7C", "7C", "7D"]}) == (
        "not_a_property"
    )
    state, _ = act(state, 0, "meld", cards=["7H", "7H", "7C"])
    for _ in range(3):
        state = pass_turn(state)
    state, _ = act(state, 0, "draw", source="stock")
    state, _ = act(state, 0, "extend", property="p1", cards=["7C", "7D", "7D"])
    assert G.view(state, 1)["properties"][0]["secured"] is False
    for _ in range(3):
        state = pass_turn(state)
    state, _ = act(state, 0, "draw", source="stock")
    assert code(state, 0, {"type": "extend", "property": "p1", "cards": ["8C"]}) == "does_not_fit"
    state, _ = act(state, 0, "extend", property="p1", cards=["7S", "7S"])
    shown = G.view(state, 2)["properties"][0]
    assert len(shown["cards"]) == 8 and shown["secured"] is True


def test_four_players_distinct_suit_sets_refuse_twins_and_stop_at_four() -> None:
    state = start(FOURS, "8H", dealer=3, distinct_suit_sets=True)
    state, _ = act(state, 0, "draw", source="stock")
    assert code(state, 0, {"type": "meld", "cards": ["7H", "7H", "7C"]}) == "not_a_property"
    state, _ = act(state, 0, "meld", cards=["7H", "7C", "7D", "7S"])
    assert G.view(state, 1)["properties"][0]["secured"] is True
    for _ in range(3):
        state = pass_turn(state)
    state, _ = act(state, 0, "draw", source="stock")
    assert code(state, 0, {"type": "extend", "property": "p1", "cards": ["7H"]}) == "set_full"


# -- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("draw", "bad_action"),
        ({}, "unknown_action"),
        ({"type": "steal"}, "unknown_action"),
        ({"type": "discard"}, "bad_action"),
        ({"type": "discard", "card": "AS", "extra": 1}, "bad_action"),
        ({"type": "discard", "card": "11S"}, "bad_card"),
        ({"type": "discard", "card": "JK"}, "bad_card"),
        ({"type": "discard", "card": 5}, "bad_card"),
        ({"type": "meld", "cards": []}, "bad_cards"),
        ({"type": "meld", "cards": "AS"}, "bad_cards"),
        ({"type": "meld", "cards": ["2C", "3C", "4C"], "from_pile": -1}, "bad_action"),
        ({"type": "meld", "cards": ["2C", "3C", "4C"], "from_pile": True}, "bad_action"),
        ({"type": "meld", "cards": ["2C", "3C", "4C"], "from_pile": "1"}, "bad_action"),
        ({"type": "meld", "cards": ["QC", "KC", "AC"]}, "not_in_hand"),
        ({"type": "meld", "cards": ["7D", "7D", "8D"]}, "not_in_hand"),
        ({"type": "extend", "property": "p9", "cards": ["7D"]}, "unknown_property"),
        ({"type": "extend", "property": 1, "cards": ["7D"]}, "bad_action"),
        ({"type": "draw", "source": "deck"}, "bad_action"),
        ({"type": "timeout"}, "no_timer"),
    ],
)
def test_bad_actions_are_refused_and_change_nothing(action: Any, expected: str) -> None:
    state = start(STEAL, "9D", dealer=1)
    state, _ = act(state, 0, "draw", source="stock")
    assert code(state, 0, action) == expected


def test_only_the_turn_seat_may_act_and_the_room_has_no_timer() -> None:
    state = start(STEAL, "9D", dealer=1)
    assert code(state, None, {"type": "timeout"}) == "no_timer"
    assert code(state, None, {"type": "draw", "source": "stock"}) == "not_your_turn"
    assert code(state, 1, {"type": "draw", "source": "stock"}) == "not_your_turn"
    assert code(state, 7, {"type": "draw", "source": "stock"}) == "not_your_turn"
    assert G.to_act(state) == {0}
