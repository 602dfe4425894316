"""axe-core (vendored under tests/browser/vendor/, pinned) finds no serious or
critical accessibility issue on the home page, the lobby, a table being
played, the Posso score sheet and the history page, at laptop and phone size.
The pages' Content-Security-Policy forbids injected scripts, so these pages
open in browser contexts that bypass it (for axe only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "vendor" / "axe-core-4.11.0" / "axe.min.js"
BAD = ("serious", "critical")


def serious_issues(page: Any) -> list[str]:
    """axe's serious and critical findings on the page as it is now."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    found = page.evaluate("async () => (await window.axe.run(document)).violations")
    out = []
    for v in found:
        if v["impact"] in BAD:
            where = "; ".join(" ".join(n["target"]) for n in v["nodes"][:4])
            out.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])}x): {v['help']} at {where}")
    return out


@pytest.mark.parametrize("phone", [False, True], ids=["laptop", "phone"])
def test_no_serious_accessibility_issue_on_any_page(pages: Pages, phone: bool) -> None:
    size = "phone" if phone else "laptop"
    page = pages.open("/", phone=phone, bypass_csp=True)
    page.wait_for_selector("#create-form")
    problems = {"home": serious_issues(page)}
    create_room(page, "Ann", "posso", settings={"bot_delay": "0.5"}, bots=2)
    page.wait_for_function("() => document.querySelectorAll('.seat-row .dot.bot').length === 2")
    problems["lobby"] = serious_issues(page)
    shoot(page, f"axe-lobby-{size}")
    page.click("#start")
    page.wait_for_selector(".felt.game-posso .hand .card")
    problems["table"] = serious_issues(page)
    shoot(page, f"axe-table-{size}")
    page.click(".tabs [data-tab=sheet]")
    page.wait_for_selector(".livesheet")
    problems["sheet"] = serious_issues(page)
    shoot(page, f"axe-sheet-{size}")
    page.goto(pages.base + "/#history")
    page.wait_for_selector("h1")
    page.wait_for_timeout(500)
    problems["history"] = serious_issues(page)
    shoot(page, f"axe-history-{size}")
    bad = {k: v for k, v in problems.items() if v}
    assert not bad, "\n".join(f"{k}: {line}" for k, v in bad.items() for line in v)


SIZES = """() => [...document.querySelectorAll('button, .btn, #nav a, #brand')]
  .filter((b) => !b.closest('.card, .pile') && !b.matches('.card, .pile, .link'))
  .filter((b) => b.getClientRects().length && getComputedStyle(b).visibility !== 'hidden')
  .map((b) => [b.textContent.trim().slice(0, 20) || b.getAttribute('aria-label'),
               Math.round(b.getBoundingClientRect().height),
               Math.round(b.getBoundingClientRect().width)])
  .filter(([, hgt, wid]) => hgt < 44 || wid < 44)"""


def test_targets_are_44px_the_focus_ring_is_not_the_glow_and_dim_cards_are_solid(
    pages: Pages,
) -> None:
    page = pages.open("/", phone=True)
    create_room(page, "Ann", "bigtwo")
    assert page.evaluate(SIZES) == [], "lobby controls under 44 px"
    page.click("#start")  # Big Two fills the empty seats with bots
    page.wait_for_selector(".felt.game-bigtwo .hand .card")
    assert page.evaluate(SIZES) == [], "table controls under 44 px"
    # The keyboard's ring is dark and white; a playable card glows yellow.
    page.focus(".hand button.card")
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")
    ring = page.evaluate("() => getComputedStyle(document.activeElement).outlineColor")
    assert ring == "rgb(21, 22, 28)", ring
    # A dimmed card (part of no play) is solid: nothing shows through it.
    dim = page.evaluate(
        """() => { const c = [...document.querySelectorAll('.hand .card')].at(-1);
        c.classList.add('dim');
        const s = getComputedStyle(c); const out = [s.opacity, s.filter];
        c.classList.remove('dim'); return out; }"""
    )
    assert dim[0] == "1" and "grayscale" in dim[1], dim
    assert "🤖" not in page.content() and "🚽" not in page.content()
