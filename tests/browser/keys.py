"""Playing with the keyboard alone: Tab and Shift+Tab to reach a control,
Space or Enter to press it, arrow keys on a slider.  No mouse on the table.

`tab_to` walks the focus the way a player does and fails if the control cannot
be reached or shows no focus ring; `keyboard_move` makes one engine action
(as the engine listed it) the way a player at the keyboard would.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

# Is the focused element `sel`, and does it show a focus ring a player can see?
FOCUSED = """(sel) => {
  const el = document.activeElement;
  if (!el || el === document.body || !el.matches(sel)) return null;
  const css = getComputedStyle(el);
  const ring = css.outlineStyle !== 'none' && parseFloat(css.outlineWidth) >= 2;
  return { ring, visible: el.matches(':focus-visible') };
}"""

#: how many Tab presses to try in each direction before giving up
REACH = 160


def tab_to(page: Any, selector: str) -> None:
    """Move the focus to `selector` with Tab (then, if it was behind, Shift+Tab)."""
    for key in ("Tab", "Shift+Tab"):
        for _ in range(REACH):
            got = page.evaluate(FOCUSED, selector)
            if got is not None:
                assert got["visible"] and got["ring"], f"{selector} has no visible focus ring"
                return
            page.keyboard.press(key)
    raise AssertionError(f"{selector} cannot be reached with Tab or Shift+Tab")


def press(page: Any, selector: str, key: str = "Enter") -> None:
    tab_to(page, selector)
    page.keyboard.press(key)


# The data-key of a hand card showing `code` that is not picked yet.
UNPICKED = """(code) => document.querySelector(
  `.hand button.card[data-code="${code}"][aria-pressed=false]`)?.dataset.key ?? null"""


def pick(page: Any, codes: list[str], key: str = "Space") -> None:
    """Pick hand cards in this order, each with Space (or Enter); a code held
    twice is picked once per mention."""
    for code in codes:
        k = page.evaluate(UNPICKED, code)
        assert k is not None, f"no unpicked {code} in the hand"
        press(page, f'.hand [data-key="{k}"]', key)
    picked = page.eval_on_selector_all(
        ".hand button.card[aria-pressed=true]", "els => els.map(e => e.dataset.code)"
    )
    assert Counter(picked) == Counter(codes), picked


def last_acted(page: Any) -> Any:
    return page.evaluate("() => window.acted.at(-1) ?? null")


def keyboard_move(page: Any, game: str, action: dict[str, Any], view: dict[str, Any]) -> None:
    """Make `action` on the drawn table with the keyboard alone."""
    kind = action["type"]
    if kind == "discard":  # Posso, Possession
        pick(page, [action["card"]])
        press(page, "[data-key=discard]")
    elif kind == "draw" and "source" in action:  # Posso, Possession: stack, stock or pile
        press(page, f"[data-key=draw-{action['source']}]")
    elif game == "posso":
        _posso(page, action, view)
    elif game == "possession":
        _possession(page, action)
    elif kind == "play":  # Possum (cards in the order they go on the pile), Big Two
        pick(page, action["cards"])
        press(page, "[data-key=play]")
    else:  # draw (Possum), pass (Big Two)
        press(page, f"[data-key={kind}]", "Space")


def _posso(page: Any, a: dict[str, Any], view: dict[str, Any]) -> None:
    kind = a["type"]
    if kind == "cut":
        tab_to(page, ".deckedge")
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
    elif kind in ("call_posso", "pass_posso"):
        press(page, f"[data-key={'call-posso' if kind == 'call_posso' else 'pass-posso'}]")
    elif kind == "answer_posso":
        press(page, f"[data-key={'allow' if a['allow'] else 'deny'}]", "Space")
    elif kind == "go_down":
        for meld in a["melds"]:  # arranged by hand, one meld at a time
            pick(page, meld["cards"])
            press(page, f"[data-key=make-{meld['kind']}]")
        press(page, "[data-key=go-down]")
    elif kind == "play_on":
        pick(page, a["cards"])
        meld = next(m for m in view["melds"] if m["id"] == a["meld"])
        where = a.get("end") if meld["kind"] == "run" else "on"  # a set has no ends
        press(page, f'[data-key="{where}:{a["meld"]}"]')
    elif kind == "swap_wild":
        pick(page, [a["card"]])
        press(page, f'[data-key="swap:{a["meld"]}:{a["to"]}"]')
    else:
        raise AssertionError(f"no keyboard way to {kind}")


def _possession(page: Any, a: dict[str, Any]) -> None:
    kind = a["type"]
    if kind == "meld":
        pick(page, a["cards"])
        if a["from_pile"]:
            # the pile's top k cards: press the k-th from the top
            press(page, f'[data-key="pile:{a["from_pile"] - 1}"]')
        press(page, "[data-key=meld]")
    elif kind == "extend":
        pick(page, a["cards"])
        press(page, f'[data-key="extend:{a["property"]}"]')
    elif kind == "keep":
        press(page, "[data-key=keep]")
    elif kind == "fold":
        page.once("dialog", lambda d: d.accept())  # "Fold? ..." is confirmed with Enter
        press(page, "[data-key=fold]")
    else:
        raise AssertionError(f"no keyboard way to {kind}")
