"""Moves you can follow (static/js/motion.js): a card landing on the pile, a
meld going down, a steal, a play in Big Two and in Possum, and a deal each
animate - on the element patch() keeps, which stays the same element (a
press on it is never lost) - and nothing animates under
prefers-reduced-motion.  Drawn from real engine positions, redrawn the way
the room redraws (patching the live table)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from app.games import GAMES
from app.games.posso import POSSO
from tests.browser.conftest import Pages, shoot
from tests.browser.tables import HANDS_OF_THREE as HANDS
from tests.browser.tables import NAMES, draw, open_table
from tests.games.posso.checks import positions
from tests.games.posso.helpers import act, game

pytestmark = pytest.mark.browser


# Redraw the live table from a new view, as the room does on every view.
REDRAW = """(spec) => {
  window.ctx.game = spec.view;
  window.ctx.legal = spec.legal || [];
  window.ctx.me = spec.seat;
  window.ctx.rerender();
}"""
# Every animation that starts from now on, with its element: a busy machine
# may finish a short animation before anyone asks what is running.
LISTEN = """() => {
  window.started = [];
  if (!window.listening) {
    document.addEventListener("animationstart",
      (e) => window.started.push([e.target, e.animationName]));
    window.listening = true;
  }
}"""
# Did an animation named `name` start on the element `sel` finds?
STARTED = """([sel, name]) => {
  const el = document.querySelector(sel);
  return !!el && window.started.some(([t, n]) => t === el && n === name);
}"""
# The CSS animation the element `sel` finds carries (its computed name).
CARRIES = "(sel) => getComputedStyle(document.querySelector(sel)).animationName"
KEEP = "(sel) => { window.kept = document.querySelector(sel); }"
SAME = "(sel) => window.kept === document.querySelector(sel)"
RUNNING = "() => document.getAnimations().map((a) => a.animationName || 'transition')"


def redraw(page: Any, name: str, state: Any, seat: int | None) -> None:
    g = GAMES[name]
    legal = g.legal_actions(state, seat) if seat is not None and seat in g.to_act(state) else []
    page.evaluate(REDRAW, {"view": g.view(state, seat), "legal": legal, "seat": seat})


def moves() -> list[tuple[str, Any, Any, int, str, str]]:
    """(game, before, after, seat watching, what moved, its animation)."""
    out: list[tuple[str, Any, Any, int, str, str]] = []
    # Posso: a discard lands on the pile
    s = game(3, HANDS, "QS", ["KS", "KH"])
    for seat in sorted(s.eligible):
        s, _ = act(s, seat, type="pass_posso")
    s, _ = act(s, 1, type="draw", source="stack")
    after, _ = act(s, 1, type="discard", card="6D")
    out.append(("posso", s, after, 0, "[data-key=pile] .card", "land"))
    # Posso: a meld goes down
    for seed in range(40):
        found = positions(300 + seed, 3, 3, down=False)
        going = [
            (st, se)
            for st, se in found
            if any(a["type"] == "go_down" for a in POSSO.legal_actions(st, se))
        ]
        if going:
            st, se = going[0]
            down = next(a for a in POSSO.legal_actions(st, se) if a["type"] == "go_down")
            after, _ = POSSO.apply(st, se, down)
            meld = after.melds[-1].id
            out.append(("posso", st, after, (se + 1) % 3, f"[data-key='meld:{meld}']", "laid"))
            break
    # Big Two: a play, then the next play on the same table
    bt = GAMES["bigtwo"]
    s = bt.new_game(4, {}, 7)
    (seat,) = bt.to_act(s)
    s, _ = bt.apply(s, seat, bt.legal_actions(s, seat)[0])
    (seat,) = bt.to_act(s)
    play = next(a for a in bt.legal_actions(s, seat) if a["type"] == "play")
    after, _ = bt.apply(s, seat, play)
    out.append(("bigtwo", s, after, (seat + 2) % 4, ".trick", "land"))
    # Possum: a play on the top card
    pm = GAMES["possum"]
    s = pm.new_game(3, {}, 11)
    for _ in range(200):
        (seat,) = pm.to_act(s)
        plays = [a for a in pm.legal_actions(s, seat) if a["type"] == "play"]
        if plays:
            after, _ = pm.apply(s, seat, plays[0])
            out.append(("possum", s, after, (seat + 1) % 3, ".possumtop .card", "land"))
            break
        s, _ = pm.apply(s, seat, pm.legal_actions(s, seat)[0])
    return out


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_each_move_animates_on_the_element_patch_keeps(pages: Pages, size: str) -> None:
    page = open_table(pages, phone=size == "phone")
    done = []
    for name, before, after, seat, sel, animation in moves():
        g = GAMES[name]
        names = NAMES[: len(g.view(before, None)["counts"])]
        draw(page, name, g.view(before, seat), [], names, seat)
        page.wait_for_timeout(400)  # what the first drawing put in has landed
        kept = page.locator(sel).count() > 0
        if kept:
            page.evaluate(KEEP, sel)
        page.evaluate(LISTEN)
        redraw(page, name, after, seat)
        assert page.evaluate(CARRIES, sel) == animation, (name, sel)
        page.wait_for_function(STARTED, arg=[sel, animation], timeout=5_000)
        if kept:  # the same element, animated again: a press on it survives
            assert page.evaluate(SAME, sel), (name, sel)
        done.append((name, animation))
    shoot(page, f"motion-{size}")
    assert {"posso", "bigtwo", "possum"} <= {n for n, _ in done}
    assert ("posso", "laid") in done, "no position to go down in was found"


def possession_steal() -> tuple[dict[str, Any], dict[str, Any]]:
    g = GAMES["possession"]
    view = g.view(g.new_game(3, {}, 5), 0)
    prop = {"id": "p1", "owner": 1, "kind": "set", "cards": ["5H", "5S", "5D"], "secured": False}
    before = {**copy.deepcopy(view), "properties": [prop]}
    stolen = {**prop, "owner": 0, "cards": [*prop["cards"], "5C"]}
    after = {**copy.deepcopy(view), "properties": [stolen]}
    return before, after


def test_a_steal_moves_the_property_to_its_new_estate_marked(pages: Pages) -> None:
    page = open_table(pages)
    before, after = possession_steal()
    draw(page, "possession", before, [], NAMES[:3], 0)
    page.evaluate(LISTEN)
    page.evaluate(REDRAW, {"view": after, "legal": [], "seat": 0})
    page.wait_for_function(STARTED, arg=["[data-key='prop:p1']", "stolen"], timeout=5_000)
    assert "Ann's" in (page.locator("[data-key='prop:p1']").get_attribute("aria-label") or "")


def test_a_new_hand_is_dealt_card_after_card(pages: Pages) -> None:
    page = open_table(pages)
    s = game(3, HANDS, "QS")
    draw(page, "posso", POSSO.view(s, 0), [], NAMES[:3], 0)
    nxt = copy.deepcopy(POSSO.view(s, 0))
    nxt["hand_no"] = 2
    nxt["hand"] = [*HANDS[0], "10H"]
    page.evaluate(REDRAW, {"view": nxt, "legal": [], "seat": 0})
    arriving = page.locator(".hand .card.arrive")
    assert arriving.count() == 8
    delays = page.eval_on_selector_all(
        ".hand .card.arrive", "els => els.map((e) => getComputedStyle(e).animationDelay)"
    )
    assert delays[0] == "0s" and delays[4] == "0.12s" and len(set(delays)) == 8


def test_nothing_moves_under_reduced_motion(pages: Pages) -> None:
    page = open_table(pages)
    page.emulate_media(reduced_motion="reduce")
    for name, before, after, seat, sel, _ in moves():
        g = GAMES[name]
        names = NAMES[: len(g.view(before, None)["counts"])]
        draw(page, name, g.view(before, seat), [], names, seat)
        page.evaluate(LISTEN)
        redraw(page, name, after, seat)
        assert page.evaluate(CARRIES, sel) == "none", (name, sel)
        assert page.evaluate(RUNNING) == [], name
        page.wait_for_timeout(300)  # an animation would have started by now
        assert page.evaluate("() => window.started.length") == 0, name
    before, after = possession_steal()
    draw(page, "possession", before, [], NAMES[:3], 0)
    page.evaluate(REDRAW, {"view": after, "legal": [], "seat": 0})
    assert page.evaluate(RUNNING) == []
