"""Invariants every Posso position and every event must satisfy, and a random
driver that checks them after each step (the harness's checks plus timeouts and
an audit of every event)."""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from itertools import pairwise
from typing import Any

from app.games.base import Event, IllegalAction
from app.games.posso import POSSO
from app.games.posso.flow import full_deck
from app.games.posso.model import PLAY, PossoState
from tests.games.harness import JUNK_ACTIONS

#: public events and the fields in them that may name cards
PUBLIC_CARD_FIELDS: dict[str, set[str]] = {
    "cut_due": set(),
    "cut": set(),
    "hand_started": {"upturn"},
    "drew": {"card"},
    "reshuffled": set(),
    "phantom_turned": {"card"},
    "posso_opened": {"card"},
    "posso_called": set(),
    "posso_passed": set(),
    "posso_closed": set(),
    "posso_answered": set(),
    "possoed": {"card"},
    "went_down": {"melds"},
    "played_on": {"meld", "cards"},
    "swapped_wild": {"meld", "card", "wild"},
    "discarded": {"card"},
    "went_out": set(),
    "hand_ended": {"hands", "row"},
    "game_over": {"result"},
    "timed_out": set(),
}
PRIVATE = {"dealt", "drew_card", "posso_penalty_card"}


@lru_cache(maxsize=16)
def _deck(decks: int) -> Counter[str]:
    return Counter(full_deck(decks))


def conserved(state: PossoState) -> None:
    assert Counter(POSSO.all_cards(state)) == _deck(state.decks)


def totals_add_up(state: PossoState) -> None:
    """Running totals are the hand points plus what cuts took away."""
    expect = [0] * state.seats
    for i, row in enumerate(state.sheet):
        assert row["hand"] == state.options.start_hand + i
        cut = row["cut"]
        if cut is not None and cut["effect"] is not None:
            eff = cut["effect"]
            assert eff["before"] == expect[eff["seat"]] and eff["after"] <= eff["before"]
            expect[eff["seat"]] = eff["after"]
        expect = [t + p for t, p in zip(expect, row["points"], strict=True)]
        assert row["totals"] == expect
        if row["went_out"] is not None:
            assert row["points"][row["went_out"]] == 0
    current = not state.sheet or state.sheet[-1]["hand"] != state.hand_no
    if current and state.cut is not None and state.cut["effect"] is not None:
        expect[state.dealer] = state.cut["effect"]["after"]
    assert state.totals == expect
    dealers = [row["dealer"] for row in state.sheet]
    for a, b in pairwise(dealers):
        assert b == (a + 1) % state.seats


def redeal_hidden(state: PossoState, seat: int | None, rng: random.Random) -> PossoState:
    """The same position as `seat` sees it, with every card hidden from it
    shuffled among the hidden places (other hands, markers, stack, buried pile)."""
    places: list[list[str]] = [h for s, h in enumerate(state.hands) if s != seat]
    places += [*state.markers, state.stack, state.pile[:-1]]
    pool = [c for p in places for c in p]
    rng.shuffle(pool)
    it = iter(pool)
    hands = [list(h) if s == seat else [next(it) for _ in h] for s, h in enumerate(state.hands)]
    markers = [[next(it) for _ in m] for m in state.markers]
    stack = [next(it) for _ in state.stack]
    pile = [next(it) for _ in state.pile[:-1]] + state.pile[-1:]
    return replace(state, hands=hands, markers=markers, stack=stack, pile=pile)


def no_leak(state: PossoState, rng: random.Random) -> None:
    if POSSO.is_over(state):  # every hand is shown once the game is over
        assert POSSO.view(state, None)["hands"] == state.hands
        return
    for seat in [None, *range(state.seats)]:
        seen = POSSO.view(state, seat)
        assert seen == POSSO.view(redeal_hidden(state, seat, rng), seat)
        if seat is not None:
            assert seen["hand"] == state.hands[seat]
        else:
            assert "hand" not in seen


def audit(pre: PossoState, seat: int | None, events: list[Event], post: PossoState) -> None:
    """Every event is addressed sensibly and names only cards its reader may know."""
    for ev in events:
        kind, to = ev["type"], ev["to"]
        if kind in PRIVATE:
            assert to is not None and 0 <= to < post.seats
            continue
        assert to is None, f"{kind} should be public"
        assert kind in PUBLIC_CARD_FIELDS, f"unexpected event {kind}"
        allowed = PUBLIC_CARD_FIELDS[kind]
        for key in ("card", "cards", "hands", "melds", "meld", "upturn", "wild"):
            if key in ev:
                assert key in allowed, f"{kind} carries {key}"
        if kind == "drew":
            assert ("card" in ev) == (ev["source"] == "pile")
            if "card" in ev:
                assert ev["card"] == pre.pile[-1]  # the pile top everyone saw
        if kind == "possoed":
            assert ev["card"] == pre.pile[-1]
        if kind == "discarded":
            assert ev["seat"] == seat and ev["card"] in pre.hands[seat]
    for ev in events:
        if ev["type"] == "drew_card":
            assert ev["to"] == seat and ev["card"] in post.hands[seat]
        elif ev["type"] == "posso_penalty_card":
            assert ev["to"] == pre.caller and ev["to"] is not None
        elif ev["type"] == "dealt":
            assert ev["cards"] == post.hands[ev["to"]] or post.hand_no != ev["hand"]


def pick(rng: random.Random, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Random play that goes down and plays on whenever it can, so hands end."""
    keen = [a for a in legal if a["type"] in ("go_down", "play_on", "swap_wild")]
    among = keen if keen and rng.random() < 0.9 else legal
    return among[rng.randrange(len(among))]


class KeenRandom(random.Random):
    """A Random whose choice among actions is `pick`'s, for tests/games/harness.py."""

    def choice(self, seq: Any) -> Any:
        if seq and isinstance(seq[0], dict):
            return pick(self, list(seq))
        return super().choice(seq)


def drive(
    seats: int,
    options: dict[str, Any],
    seed: int,
    *,
    leak_every: int = 40,
    max_steps: int = 60_000,
) -> tuple[PossoState, int]:
    """One random game to the end, checking everything after every step."""
    rng = random.Random(seed)
    state = POSSO.new_game(seats, options, seed)
    for step in range(max_steps):
        conserved(state)
        totals_add_up(state)
        if step % leak_every == 0:
            no_leak(state, rng)
        if POSSO.is_over(state):
            return state, step
        acting = POSSO.to_act(state)
        moot = POSSO.timer(state) == "cut_moot"
        assert acting or moot, "someone acts in Posso until the end, but for a moot cut"
        if moot and rng.random() < 0.3:  # as in a log written before moot cuts
            seat: int | None = state.dealer
            action: dict[str, Any] = {"type": "cut", "at": rng.random()}
        elif moot or (POSSO.timer(state) is not None and rng.random() < 0.08):
            seat = None
            action = {"type": "timeout"}
        else:
            seat = rng.choice(sorted(acting))
            legal = POSSO.legal_actions(state, seat)
            assert legal, f"seat {seat} must act but has no legal action"
            action = pick(rng, legal)
        before = copy.deepcopy(state) if step % 13 == 0 else None
        if before is not None:
            idle = [s for s in range(seats) if s not in acting and s != seat]
            wrong = [(rng.choice(idle), action)] if idle and seat is not None else []
            junk = [j for j in JUNK_ACTIONS if seat is not None or j.get("type") != "timeout"]
            for who, bad in [*((seat, j) for j in junk), *wrong]:
                try:
                    POSSO.apply(state, who, bad)
                except IllegalAction as err:
                    assert err.code and err.message
                else:
                    raise AssertionError(f"{bad!r} from seat {who} was accepted")
            assert state == before, "a refused action changed the state"
        try:
            new, events = POSSO.apply(state, seat, action)
        except IllegalAction as err:  # a listed action must be accepted
            raise AssertionError(f"legal {action} refused: {err.code} {err.message}") from None
        if before is not None:
            assert state == before, f"apply mutated its input on {action!r}"
        audit(state, seat, events, new)
        state = new
    raise AssertionError(f"game did not end within {max_steps} steps")


def positions(
    seed: int, seats: int, wanted: int, *, down: bool = True
) -> list[tuple[PossoState, int]]:
    """Turns of seats that have gone down (with `down` false: that may go down,
    after drawing), from random games that go down keenly."""
    rng = random.Random(seed)
    found: list[tuple[PossoState, int]] = []
    state = POSSO.new_game(seats, {"cutting": "off", "start_hand": rng.randint(1, 9)}, seed)
    for _ in range(20_000):
        if POSSO.is_over(state) or len(found) >= wanted:
            break
        seat = min(POSSO.to_act(state))
        if state.phase == PLAY and state.down[seat] == down and (state.melds or not down):
            found.append((state, seat))
        state, _ = POSSO.apply(state, seat, pick(rng, POSSO.legal_actions(state, seat)))
    return found
