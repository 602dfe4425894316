"""The hand's own motion, from stacked decks: the deal, Posso windows and their
answers, phantoms, the stack running out, the cut, the end of a hand and the sheet."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.games.cards import rng_for
from app.games.posso import POSSO
from app.games.posso.flow import cut_jitter
from app.games.posso.model import PossoState
from tests.games.posso.helpers import act, close_window, deck_for, game, public, refused, types

H0 = ["3H", "3C", "3D", "5H", "5S", "2C", "9H"]
H1 = ["4H", "4C", "4D", "6H", "6S", "JK", "2S"]
H2 = ["7H", "7C", "7D", "8H", "8S", "8C", "JH"]
H3 = ["9C", "9D", "10C", "10D", "JC", "JD", "QC"]


def four(**options: object) -> PossoState:
    """Four players, hand 1, dealer 0: seat 1 plays first; upturn QS."""
    return game(4, [H0, H1, H2, H3], "QS", ["4S", "10S", "KC", "KD", "KH"], **options)


# ---- the deal ---------------------------------------------------------------------


def test_deal_goes_clockwise_from_the_dealers_left_then_upturn_then_stack() -> None:
    deck = deck_for(4, [H0, H1, H2, H3], "QS", ["4S"], dealer=2)
    assert deck[:4] == [H3[0], H0[0], H1[0], H2[0]]
    s = POSSO.new_game(4, {"cutting": "off", "first_dealer": 2}, 5, deck)
    assert s.hands == [H0, H1, H2, H3] and s.pile == ["QS"] and s.stack[-1] == "4S"
    assert POSSO.view(s, None)["turn"] == 3


@pytest.mark.parametrize("hand", [1, 4, 10])
def test_hand_k_deals_six_plus_k(hand: int) -> None:
    s = POSSO.new_game(5, {"cutting": "off", "start_hand": hand}, 3)
    assert [len(h) for h in s.hands] == [6 + hand] * 5
    assert len(s.stack) == 4 * 54 - 5 * (6 + hand) - 1
    assert POSSO.view(s, 0)["requirement"]["deal"] == 6 + hand


def test_two_players_deal_to_phantoms_once_and_phantom_a_plays_first() -> None:
    h0 = H0
    h1 = H1
    deck = deck_for(2, [h0, h1], "QS", ["5D", "6D", "7D", "8D"], dealer=0, markers=("KC", "KD"))
    assert deck[:6] == ["KC", h1[0], "KD", h0[0], h1[1], h0[1]]
    s = POSSO.new_game(2, {"cutting": "off", "first_dealer": 0}, 9, deck)
    assert s.markers == [[], ["KC"], [], ["KD"]] and s.hands == [h0, h1]
    # phantom A turned the stack top onto the upturn; the dealer may Posso it
    assert s.pile == ["QS", "5D"] and s.phase == "posso_window" and s.eligible == (0,)
    v = POSSO.view(s, 1)
    assert v["ring"] == [0, None, 1, None] and v["turn"] == 1 and v["to_act"] == [0]
    assert "KC" not in str(v) and "KD" not in str(v)
    s, _ = act(s, 0, type="pass_posso")
    s, _ = act(s, 1, type="draw", source="pile")
    s, ev = act(s, 1, type="discard", card="4H")
    # phantom B turns the next card; the opponent (who just discarded) may Posso it
    turned = public(ev, "phantom_turned")
    assert turned["card"] == "6D" and turned["phantom"] == 3
    assert s.pile[-1] == "6D" and s.eligible == (1,) and POSSO.view(s, None)["turn"] == 0
    s, _ = act(s, 1, type="call_posso")
    s, ev = act(s, 0, type="answer_posso", allow=True)
    assert s.hands[1][-2:] == ["6D", "7D"]
    assert refused(s, 1, type="call_posso") == "no_posso_window"


def test_two_player_dealer_alternates_and_phantom_a_sits_left_of_the_dealer() -> None:
    s = POSSO.new_game(2, {"cutting": "off", "first_dealer": 1}, 4)
    # seat 1 (position 2) dealt, phantom A (position 3) turned a card: seat 0 is next
    assert s.dealer == 1 and s.turn == 0 and len(s.pile) == 2
    assert sum(len(m) for m in s.markers) == 2 and [len(h) for h in s.hands] == [7, 7]
    assert s.eligible == (1,)  # the dealer may Posso phantom A's card


def test_first_dealer_is_seeded_unless_chosen() -> None:
    dealers = {POSSO.new_game(5, {"cutting": "off"}, seed).dealer for seed in range(40)}
    assert dealers == set(range(5))
    again = POSSO.new_game(5, {"cutting": "off"}, 17)
    assert again.dealer == POSSO.new_game(5, {"cutting": "off"}, 17).dealer
    assert POSSO.new_game(5, {"cutting": "off", "first_dealer": 3}, 17).dealer == 3


# ---- the Posso window -------------------------------------------------------------


def test_window_after_the_upturn_includes_the_dealer_and_blocks_the_next_player() -> None:
    s = four()
    assert s.phase == "posso_window" and POSSO.to_act(s) == {0, 2, 3}
    assert POSSO.timer(s) == "posso_window"
    assert refused(s, 1, type="draw", source="stack") == "posso_window_open"
    assert refused(s, 1, type="call_posso") == "posso_next_player"
    assert POSSO.legal_actions(s, 1) == []
    s, ev = act(s, 2, type="pass_posso")
    assert public(ev, "posso_passed")["seat"] == 2
    assert refused(s, 2, type="call_posso") == "already_answered"
    assert POSSO.to_act(s) == {0, 3}
    s, _ = act(s, 0, type="pass_posso")
    s, ev = act(s, 3, type="pass_posso")
    assert public(ev, "posso_closed")["caller"] is None
    assert s.phase == "draw" and POSSO.to_act(s) == {1} and POSSO.timer(s) is None


def test_window_after_a_discard_excludes_the_discarder_and_the_next_player() -> None:
    s = close_window(four())
    s, _ = act(s, 1, type="draw", source="stack")
    s, _ = act(s, 1, type="discard", card="6S")
    assert s.eligible == (0, 3)
    assert refused(s, 1, type="call_posso") == "posso_own_discard"
    assert refused(s, 2, type="call_posso") == "posso_next_player"
    assert refused(s, 2, type="draw", source="pile") == "posso_window_open"
    assert refused(s, 0, type="answer_posso", allow=True) == "no_posso_call"


def test_priority_goes_to_the_nearest_caller_after_the_next_player() -> None:
    s = four()  # next is seat 1: clockwise after it come 2, 3, 0
    s, _ = act(s, 0, type="call_posso")
    s, ev = act(s, 3, type="call_posso")
    assert public(ev, "posso_called")["seat"] == 3
    s, ev = act(s, 2, type="pass_posso")
    closed = public(ev, "posso_closed")
    assert closed["caller"] == 3 and sorted(closed["callers"]) == [0, 3]
    assert s.phase == "posso_answer" and POSSO.to_act(s) == {1} and POSSO.timer(s) == "posso_answer"
    assert refused(s, 3, type="answer_posso", allow=True) == "not_your_turn"
    assert refused(s, 1, type="answer_posso", allow="yes") == "bad_action"
    assert refused(s, 1, type="draw", source="stack") == "posso_answer_due"


def test_deny_makes_the_next_player_take_the_pile_top_as_their_draw() -> None:
    s = four()
    s, _ = act(s, 2, type="call_posso")
    s = close_window(s)
    s, ev = act(s, 1, type="answer_posso", allow=False)
    assert s.hands[1][-1] == "QS" and s.phase == "play" and s.hands[2] == H2
    assert public(ev, "drew") == {
        "type": "drew",
        "to": None,
        "seat": 1,
        "source": "pile",
        "card": "QS",
    }


def test_allow_gives_the_caller_pile_top_and_stack_top_and_no_turn() -> None:
    s = four()
    s, _ = act(s, 2, type="call_posso")
    s = close_window(s)
    s, ev = act(s, 1, type="answer_posso", allow=True)
    assert s.hands[2] == [*H2, "QS", "4S"] and s.possos == [0, 0, 1, 0]
    assert public(ev, "possoed") == {
        "type": "possoed",
        "to": None,
        "seat": 2,
        "card": "QS",
        "penalty": True,
    }
    assert [e for e in ev if e["to"] is not None] == [
        {"type": "posso_penalty_card", "to": 2, "card": "4S"}
    ]
    assert s.phase == "draw" and POSSO.to_act(s) == {1}
    assert refused(s, 2, type="discard", card="QS") == "not_your_turn"
    # no second call until seat 1's turn ends
    assert refused(s, 3, type="call_posso") == "no_posso_window"
    s, _ = act(s, 1, type="draw", source="stack")
    assert refused(s, 3, type="call_posso") == "no_posso_window"
    s, _ = act(s, 1, type="discard", card="6S")
    s, _ = act(s, 3, type="call_posso")


def test_timeouts_close_the_window_and_allow_the_call() -> None:
    s = four()
    assert refused(s, 0, type="timeout") == "room_only"
    s, _ = act(s, 3, type="call_posso")
    s, ev = act(s, None, type="timeout")
    closed = public(ev, "posso_closed")
    assert closed["timed_out"] and sorted(closed["silent"]) == [0, 2] and closed["caller"] == 3
    s, ev = act(s, None, type="timeout")
    assert public(ev, "posso_answered")["allow"] and public(ev, "posso_answered")["timed_out"]
    assert s.hands[3][-2:] == ["QS", "4S"] and s.phase == "draw"
    assert refused(s, None, type="timeout") == "no_timer"


def test_dead_card_option_leaves_only_the_stack() -> None:
    s = four(dead_card=True)
    s, _ = act(s, 2, type="call_posso")
    s = close_window(s)
    s, _ = act(s, 1, type="answer_posso", allow=False)  # no Posso happened: nothing dead
    assert s.dead is False
    s = four(dead_card=True)
    s, _ = act(s, 2, type="call_posso")
    s = close_window(s)
    s, _ = act(s, 1, type="answer_posso", allow=True)
    assert s.pile == [] and s.dead and POSSO.view(s, 1)["dead_card"]
    s2 = replace(s, pile=["9S"], dead=True)
    assert refused(s2, 1, type="draw", source="pile") == "dead_card"
    assert POSSO.legal_actions(s2, 1) == [{"type": "draw", "source": "stack"}]
    s3, _ = act(s2, 1, type="draw", source="stack")
    assert s3.dead is False


def test_no_posso_down_option_bars_those_who_went_down() -> None:
    stack = ["4S", "10S", "KC", "KD", "KH"]
    s = close_window(game(4, [H0, H1, H2, H3], "QS", stack, no_posso_down=True))
    s, _ = act(s, 1, type="draw", source="stack")
    s, _ = act(
        s,
        1,
        type="go_down",
        melds=[
            {"kind": "set", "cards": ["4H", "4C", "4D"]},
            {"kind": "set", "cards": ["6H", "6S", "JK"]},
        ],
    )
    s, _ = act(s, 1, type="discard", card="4S")
    s = close_window(s)  # seats 0 and 3
    s, _ = act(s, 2, type="draw", source="stack")
    s, _ = act(s, 2, type="discard", card="7H")
    assert s.eligible == (0,)  # seat 1 went down, seat 2 discarded, seat 3 is next
    assert refused(s, 1, type="call_posso") == "posso_gone_down"


# ---- the stack running out ----------------------------------------------------------

ONE_DECK_H10 = {"decks": 1}


def tiny() -> PossoState:
    """Three players, one deck, hand 10: 48 dealt, the upturn, five in the stack."""
    s = POSSO.new_game(3, {"cutting": "off", "decks": 1, "start_hand": 10, "first_dealer": 0}, 11)
    assert len(s.stack) == 5 and s.eligible == (0, 2)
    return s


def test_stack_is_rebuilt_from_the_pile_but_its_top() -> None:
    s = close_window(tiny())
    for _ in range(5):
        seat = POSSO.view(s, None)["turn"]
        s, _ = act(s, seat, type="draw", source="stack")
        s, _ = act(s, seat, type="discard", card=s.hands[seat][0])
        s = close_window(s)
    assert s.stack == [] and len(s.pile) == 6
    top = s.pile[-1]
    buried = sorted(s.pile[:-1])
    seat = POSSO.view(s, None)["turn"]
    s, ev = act(s, seat, type="draw", source="stack")
    assert public(ev, "reshuffled")["size"] == 5
    assert s.pile == [top] and sorted([*s.stack, s.hands[seat][-1]]) == buried


def test_a_posso_with_no_stack_card_left_ends_the_hand() -> None:
    s = tiny()
    s, _ = act(s, 2, type="call_posso")
    s = close_window(s)
    s, _ = act(s, 1, type="answer_posso", allow=True)  # stack 4, pile empty
    s, _ = act(s, 1, type="draw", source="stack")  # stack 3
    s, _ = act(s, 1, type="discard", card=s.hands[1][0])
    s, _ = act(s, 0, type="call_posso")
    s, _ = act(s, 2, type="answer_posso", allow=True)  # stack 2, pile empty
    s, _ = act(s, 2, type="draw", source="stack")  # stack 1
    s, _ = act(s, 2, type="discard", card=s.hands[2][0])
    s, _ = act(s, 1, type="pass_posso")
    s, _ = act(s, 0, type="draw", source="stack")  # stack 0
    s, _ = act(s, 0, type="discard", card=s.hands[0][0])
    assert s.stack == [] and len(s.pile) == 2
    s, _ = act(s, 2, type="call_posso")
    kept = s.pile[-1]
    s, ev = act(s, 1, type="answer_posso", allow=True)
    assert public(ev, "possoed") == {
        "type": "possoed",
        "to": None,
        "seat": 2,
        "card": kept,
        "penalty": False,
    }
    row = public(ev, "hand_ended")["row"]
    assert row["went_out"] is None and row["possos"] == [1, 0, 2]
    assert kept in public(ev, "hand_ended")["hands"][2]
    assert s.phase == "over"  # that was hand ten


def test_when_nothing_can_be_taken_at_a_turn_the_hand_ends() -> None:
    s = tiny()
    s, _ = act(s, 2, type="call_posso")
    s = close_window(s)
    s, _ = act(s, 1, type="answer_posso", allow=True)
    s, _ = act(s, 1, type="draw", source="stack")
    s, _ = act(s, 1, type="discard", card=s.hands[1][0])
    s, _ = act(s, 0, type="call_posso")
    s, _ = act(s, 2, type="answer_posso", allow=True)
    s, _ = act(s, 2, type="draw", source="stack")
    s, _ = act(s, 2, type="discard", card=s.hands[2][0])
    s, _ = act(s, 1, type="call_posso")
    s, ev = act(s, 0, type="answer_posso", allow=True)  # takes the last stack card
    assert s.stack == [] and "hand_ended" in types(ev)
    assert public(ev, "hand_ended")["row"]["went_out"] is None


@pytest.mark.parametrize("cap", [0, 1])
def test_once_the_stack_may_not_be_rebuilt_the_hand_ends_at_the_next_turn(cap: int) -> None:
    opts = {"cutting": "off", "decks": 1, "start_hand": 10, "first_dealer": 0, "reshuffles": cap}
    s = close_window(POSSO.new_game(3, opts, 11))
    draws = 0
    while s.phase != "over":
        seat = POSSO.view(s, None)["turn"]
        s, _ = act(s, seat, type="draw", source="stack")
        s, _ = act(s, seat, type="discard", card=s.hands[seat][0])
        s = close_window(s)  # the last pass starts a turn that cannot draw
        draws += 1
    # five stack cards, then (cap 1) the pile but its top: 5 cards more
    assert draws == 5 * (cap + 1)
    assert s.sheet[-1]["went_out"] is None and s.reshuffles == cap
    assert POSSO.view(s, None)["options"]["reshuffles"] == cap


def test_stack_draw_refused_when_it_cannot_be_rebuilt() -> None:
    s = close_window(four())
    s = replace(s, stack=[], pile=["QS"])
    assert refused(s, 1, type="draw", source="stack") == "stack_empty"
    assert POSSO.legal_actions(s, 1) == [{"type": "draw", "source": "pile"}]
    s = replace(s, stack=[], pile=[])
    assert refused(s, 1, type="draw", source="pile") == "pile_empty"


# ---- the cut ----------------------------------------------------------------------


def cutting(kind: str = "to_lead", seed: int = 21) -> PossoState:
    deck = deck_for(3, [H0, H1, H2], "QS", ["4S", "10D"])
    return POSSO.new_game(3, {"cutting": kind, "first_dealer": 0}, seed, deck)


def hit_at(s: PossoState, offset: int = 0) -> float:
    """The position whose count, after this cut's hidden jitter, is target + offset."""
    spread = cut_jitter(len(s.stack), s.options.rules)
    jitter = rng_for(s.seed, "cut", s.hand_no).randint(-spread, spread)
    return (3 * 7 + offset - jitter) / len(s.stack)


def test_the_dealer_cuts_before_the_deal() -> None:
    s = replace(cutting(), totals=[30, 0, 5])  # a hit would lower the dealer's total
    assert s.phase == "cut" and POSSO.to_act(s) == {0} and POSSO.timer(s) == "cut"
    assert s.hands == [[], [], []] and len(s.stack) == 108
    v = POSSO.view(s, 1)
    assert v["cut"] == {
        "due": True, "dealer": 0, "deck": 108, "target": 21, "moot": False, "jitter": 7
    }  # fmt: skip
    assert v["turn"] is None
    assert refused(s, 0, type="discard", card="3H") == "cut_due"
    assert refused(s, 1, type="cut", at=0.5) == "not_your_turn"
    assert refused(s, 0, type="cut", at=1.5) == "bad_action"
    assert refused(s, 0, type="cut", at="0.2") == "bad_action"
    assert refused(s, 0, type="cut", at=True) == "bad_action"
    assert refused(s, 1, type="call_posso") == "no_posso_window"
    s, ev = act(s, 0, type="cut", at=0.5)
    made = public(ev, "cut")
    jitter = rng_for(21, "cut", 1).randint(-7, 7)  # a deck of 108: J = 7
    assert made["count"] == 54 + jitter and made["target"] == 21 and not made["hit"]
    assert made["effect"] is None
    assert s.hands == [H0, H1, H2] and "hand_started" in types(ev)


@pytest.mark.parametrize("offset", [0, 1])
def test_a_hit_to_lead_lowers_the_dealer_to_the_leader(offset: int) -> None:
    s = replace(cutting(), totals=[120, 45, 80])
    s, ev = act(s, 0, type="cut", at=hit_at(s, offset))
    made = public(ev, "cut")
    assert made["hit"] and made["count"] == 21 + offset
    assert made["effect"] == {"seat": 0, "before": 120, "after": 45}
    assert s.totals == [45, 45, 80]


def test_near_misses_and_the_leader_gain_nothing() -> None:
    for offset in (-1, 2):
        s = replace(cutting(), totals=[120, 45, 80])
        s, ev = act(s, 0, type="cut", at=hit_at(s, offset))
        assert not public(ev, "cut")["hit"] and s.totals == [120, 45, 80]
    s = replace(cutting(), totals=[30, 45, 80])
    s, ev = act(s, 0, type="cut", at=hit_at(s))
    assert public(ev, "cut")["effect"] == {"seat": 0, "before": 30, "after": 30}


@pytest.mark.parametrize(
    ("kind", "totals", "moot"),
    [
        ("to_lead", [0, 0, 0], True),  # hand 1: every total is 0
        ("to_win", [0, 0, 0], True),
        ("to_lead", [30, 45, 80], True),  # the dealer leads already
        ("to_lead", [45, 30, 80], False),  # a hit would bring 45 down to 30
        ("to_lead", [30, 30, 80], True),  # level with the leader
        ("to_win", [30, 45, 80], False),  # a hit would bring 30 down to 0
        ("to_win", [0, 45, 80], True),
    ],
)
def test_a_cut_is_moot_when_a_hit_would_leave_the_dealers_total(
    kind: str, totals: list[int], moot: bool
) -> None:
    s = replace(cutting(kind), totals=totals)
    assert POSSO.timer(s) == ("cut_moot" if moot else "cut")
    assert POSSO.to_act(s) == (set() if moot else {0})
    assert bool(POSSO.legal_actions(s, 0)) is not moot
    assert POSSO.view(s, 0)["cut"]["moot"] is moot


def test_the_first_hands_cut_is_moot_and_its_timeout_deals_at_once() -> None:
    s = cutting()
    assert s.hand_no == 1 and s.totals == [0, 0, 0]
    # nobody is asked: the table waits only on the room's timer, which has no time
    assert POSSO.timer(s) == "cut_moot" and POSSO.to_act(s) == set()
    assert [POSSO.legal_actions(s, seat) for seat in range(3)] == [[], [], []]
    s, ev = act(s, None, type="timeout")
    assert public(ev, "timed_out")["timer"] == "cut_moot"
    made = public(ev, "cut")
    assert made["moot"] is True and made["count"] is None and not made["hit"]
    assert made["effect"] is None and s.totals == [0, 0, 0]
    assert s.hands == [H0, H1, H2] and s.phase == "posso_window"
    assert POSSO.view(s, 1)["cut"]["moot"] is True


def test_a_moot_cut_the_dealer_makes_is_still_accepted_and_recorded_as_made() -> None:
    """Logs from before moot cuts were passed over hold the dealer's own cut."""
    s = cutting()
    assert refused(s, 1, type="cut", at=0.5) == "not_your_turn"
    s, ev = act(s, 0, type="cut", at=hit_at(s))
    made = public(ev, "cut")
    assert made["hit"] and made["count"] == 21 and "moot" not in made
    assert made["effect"] == {"seat": 0, "before": 0, "after": 0}
    assert s.hands == [H0, H1, H2] and s.cut is not None and "moot" not in s.cut


def test_a_hit_to_win_zeroes_the_dealer() -> None:
    s = replace(cutting("to_win"), totals=[120, 45, 80])
    s, _ = act(s, 0, type="cut", at=hit_at(s))
    assert s.totals == [0, 45, 80]


def test_a_cut_that_times_out_is_a_miss() -> None:
    s = replace(cutting(), totals=[120, 45, 80])
    s, ev = act(s, None, type="timeout")
    made = public(ev, "cut")
    assert made["at"] is None and made["count"] is None and not made["hit"]
    assert s.totals == [120, 45, 80] and s.phase == "posso_window"


def test_the_cut_lands_on_the_sheet_and_recurs_each_hand() -> None:
    s, _ = act(cutting(), 0, type="cut", at=0.2)
    cut = s.cut
    s = close_window(s)
    s, _ = act(s, 1, type="draw", source="stack")
    s, _ = act(
        s,
        1,
        type="go_down",
        melds=[
            {"kind": "set", "cards": ["4H", "4C", "4D"]},
            {"kind": "set", "cards": ["6H", "6S", "JK"]},
        ],
    )
    s, _ = act(s, 1, type="play_on", meld="m1", cards=["4S"])
    s, ev = act(s, 1, type="discard", card="2S")
    row = public(ev, "hand_ended")["row"]
    assert row["cut"] == cut and row["cut"]["at"] == 0.2
    assert s.phase == "cut" and s.hand_no == 2 and s.dealer == 1
    # seat 1 went out, so leads with 0: this cut could change nothing
    assert s.totals[1] == min(s.totals) and POSSO.timer(s) == "cut_moot"
    assert public(ev, "cut_due") == {
        "type": "cut_due",
        "to": None,
        "hand": 2,
        "dealer": 1,
        "deck": 108,
        "target": 24,
        "moot": True,
    }
    s = replace(s, totals=[0, 50, 55])  # as if seat 1 trailed: the cut matters
    assert POSSO.to_act(s) == {1} and POSSO.timer(s) == "cut"


# ---- end of a hand, the sheet, the end of the game --------------------------------


def test_hand_end_scores_shows_hands_and_writes_the_row() -> None:
    s = close_window(game(3, [H0, H1, H2], "QS", ["4S"]))
    s = replace(s, totals=[480, 10, 0])
    s, _ = act(s, 1, type="draw", source="stack")
    s, _ = act(
        s,
        1,
        type="go_down",
        melds=[
            {"kind": "set", "cards": ["4H", "4C", "4D"]},
            {"kind": "set", "cards": ["6H", "6S", "JK"]},
        ],
    )
    s, _ = act(s, 1, type="play_on", meld="m1", cards=["4S"])
    s, ev = act(s, 1, type="discard", card="2S")
    ended = public(ev, "hand_ended")
    assert ended["hands"] == [H0, [], H2]
    assert ended["row"] == {
        "hand": 1,
        "dealer": 0,
        "requirement": POSSO.view(game(3, [H0, H1, H2], "QS"), None)["requirement"],
        "went_out": 1,
        "points": [55, 0, 55],
        "totals": [535, 10, 55],
        "toilet": [True, False, False],
        "cut": None,
        "possos": [0, 0, 0],
    }
    v = POSSO.view(s, 2)
    assert v["sheet"] == [ended["row"]] and v["totals"] == [535, 10, 55]
    assert v["last_hand"] == {"hand": 1, "went_out": 1, "hands": [H0, [], H2]}
    assert v["hand_no"] == 2 and v["dealer"] == 1 and len(v["hand"]) == 8
    assert v["melds"] == [] and v["down"] == [False, False, False]


@pytest.mark.parametrize(("decks", "spread"), [(1, 3), (2, 7), (3, 10)])
def test_a_cut_lands_within_a_jitter_that_grows_with_the_deck(decks: int, spread: int) -> None:
    """RULES.md, "Option cutting": uniform in -J..+J, J = max(2, round(cards / 16)),
    so a perfect aim hits about as often as a steady hand would."""
    landed = set()
    for seed in range(400):
        s = POSSO.new_game(3, {"cutting": "to_win", "decks": decks, "first_dealer": 0}, seed)
        size = len(s.stack)
        s, _ = POSSO.apply(s, 0, {"type": "cut", "at": 0.5})
        assert s.cut is not None
        landed.add(s.cut["count"] - round(0.5 * size))
    assert landed == set(range(-spread, spread + 1))


def test_games_stored_before_rules_versions_cut_as_they_did() -> None:
    assert [cut_jitter(n, 1) for n in (54, 108, 162)] == [2, 2, 2]
    assert [cut_jitter(n, 2) for n in (20, 54, 108, 162)] == [2, 3, 7, 10]
