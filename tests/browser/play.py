"""Driving the real page the way a person would: fill the forms, click cards
and buttons. Shared by the browser tests."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from websockets.sync.client import connect

# Room settings that keep the tests quick: bots move at once, short windows.
FAST = {"bot_delay": "0", "posso_window": "0.5", "posso_answer": "3", "cut": "5"}


def create_room(
    page: Any,
    name: str,
    game: str,
    *,
    options: dict[str, str | bool] | None = None,
    settings: dict[str, str] | None = None,
    bots: int = 0,
) -> str:
    """Open a room from the home page; returns the invite link."""
    page.fill("#create-name", name)
    page.wait_for_selector("input[name=game]", state="attached")
    offered = page.eval_on_selector_all("input[name=game]", "els => els.map(e => e.value)")
    assert game in offered, f"the server does not offer {game} (only {offered})"
    page.check(f"input[name=game][value={game}]", force=True)
    for key, value in (options or {}).items():
        field = page.locator(f"#opt-{game}-{key}")
        if isinstance(value, bool):
            field.set_checked(value)
        elif field.evaluate("el => el.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    page.click("#create-form details > summary")
    for key, value in {**FAST, **(settings or {})}.items():
        page.fill(f"#opt-room-{key}", value)
    page.fill("#create-bots", str(bots))
    page.click("#create-form button[type=submit]")
    page.wait_for_selector(".lobbypanel")
    link = page.input_value(".invite input")
    assert "/r/" in link
    return str(link)


def join_by_link(page: Any, name: str) -> None:
    """On an invite link's page: type a name and take a seat."""
    page.fill("#invite-name", name)
    page.click("button:has-text('Take a seat')")
    page.wait_for_selector(".lobbypanel")


def version(page: Any) -> int:
    return int(page.evaluate("() => Number(document.body.dataset.v || -1)"))


def click_and_wait(page: Any, selector: str) -> None:
    """Click something that sends a move, and wait for the room to change."""
    v = version(page)
    page.click(selector)
    page.wait_for_function(f"() => Number(document.body.dataset.v) > {v}", timeout=10_000)


def my_turn(page: Any) -> bool:
    return bool(page.locator(".mearea.turn").count())


def game_over(page: Any) -> bool:
    return page.evaluate("() => document.body.dataset.room") == "finished"


def hand_labels(page: Any) -> list[str]:
    return list(page.eval_on_selector_all(".hand .card", "els => els.map(e => e.dataset.code)"))


def pick_until_ready(page: Any, play_key: str = "play") -> bool:
    """Pick lit cards one at a time until the picks make a legal play (the
    page lights only cards that can still complete one). False if none."""
    ready = f"[data-key={play_key}][data-ready=true]"
    for _ in range(8):
        if page.locator(ready).count():
            return True
        lit = page.locator(".hand button.card.playable")
        if not lit.count():
            return False
        lit.first.click(position={"x": 6, "y": 24})
    return bool(page.locator(ready).count())


def take_possum_turn(page: Any) -> None:
    """One move of Possum: draw when the page says you cannot play, else play."""
    if page.locator("[data-key=draw]:not([disabled])").count():
        click_and_wait(page, "[data-key=draw]")
        return
    assert pick_until_ready(page), "no playable cards lit although a play was due"
    click_and_wait(page, "[data-key=play][data-ready=true]")


def wait_until(check: Any, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def take_bigtwo_turn(page: Any) -> None:
    """One move of Big Two: the weakest play the page lights up, else pass."""
    if pick_until_ready(page):
        click_and_wait(page, "[data-key=play][data-ready=true]")
        return
    assert page.locator("[data-key=pass]:not([disabled])").count(), "neither a play nor a pass"
    click_and_wait(page, "[data-key=pass]")


def posso_step(page: Any, *, call: bool = True) -> str | None:
    """Do whatever this Posso page is asked to do now, if anything; says what.
    `call`: answer every Posso window with a call (else pass); calls are allowed."""
    if page.locator(".deckedge").count():
        page.click(".deckedge", position={"x": 40, "y": 20})
        click_and_wait(page, "[data-key=cut]")
        return "cut"
    if page.locator("[data-key=call-posso]").count():
        click_and_wait(page, "[data-key=call-posso]" if call else "[data-key=pass-posso]")
        return "call" if call else "pass"
    if page.locator("[data-key=allow]").count():
        click_and_wait(page, "[data-key=allow]")
        return "allow"
    if page.locator("[data-key=draw-stack]:not([disabled])").count():
        click_and_wait(page, "[data-key=draw-stack]")
        return "draw"
    if my_turn(page) and page.locator("[data-key=discard]").count():
        # Cards overlap in a big hand: tap the showing corner, as a person would.
        page.locator(".hand button.card").first.click(position={"x": 6, "y": 24})
        click_and_wait(page, "[data-key=discard]:not([disabled])")
        return "discard"
    return None


def take_possession_turn(page: Any) -> str:
    """One move of Possession: pick up from the stock; then lay a new property
    if the lit cards make one, else add to or steal a lit property, else
    discard (or, in the showdown, fold)."""
    if page.locator("[data-key=draw-stock]:not([disabled])").count():
        click_and_wait(page, "[data-key=draw-stock]")
        return "draw"
    if pick_until_ready(page, "meld"):
        click_and_wait(page, "[data-key=meld][data-ready=true]")
        return "meld"
    page.click("[data-key=clear]") if page.locator("[data-key=clear]").count() else None
    if page.locator("[data-key=keep]").count():
        click_and_wait(page, "[data-key=keep]")
        return "keep"
    if page.locator("[data-key=discard]").count():
        page.locator(".hand button.card").first.click(position={"x": 6, "y": 24})
        click_and_wait(page, "[data-key=discard]:not([disabled])")
        return "discard"
    page.once("dialog", lambda d: d.accept())
    click_and_wait(page, "[data-key=fold]")
    return "fold"


def room_command(base: str, code: str, token: str, cmd: str, **fields: Any) -> None:
    """Open the host's socket, send one room command, wait for its answer."""
    ws_url = base.replace("http", "ws") + f"/ws/rooms/{code}"
    with connect(ws_url) as ws:
        ws.send(json.dumps({"auth": token}))
        ws.send(json.dumps({"id": 1, "cmd": {"type": cmd, **fields}}))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            msgs = json.loads(ws.recv(timeout=20))
            for m in msgs if isinstance(msgs, list) else [msgs]:
                if m.get("re") == 1:
                    assert m.get("ok"), m
                    return
        raise AssertionError(f"no answer to {cmd}")


def until_finished(http: httpx.Client, code: str, games: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        room = http.get(f"/api/rooms/{code}").json()["room"]
        if room["status"] == "finished" and room["games_played"] >= games:
            return
        time.sleep(0.3)
    raise AssertionError(f"room {code} did not finish game {games}")
