"""Records in the client, against the real server: a room plays two Posso
games (the host starts each, then steps away and the stand-in bots finish
it), then the host's browser opens the evening's score sheets and prints them
to PDF with Chromium, one page per game with the chart; the game page prints
its one sheet; the person page and the room's evening show what happened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from pypdf import PdfReader

from app.api.identity import GUEST_COOKIE, guest_key
from app.db.people import person_of
from tests.browser.conftest import LAPTOP, Pages, shoot
from tests.browser.play import room_command, until_finished

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

HOST = "guest-printer-" + "p" * 40
#: bots move at once; the host's seat gets a stand-in as soon as the host leaves
FAST = {"bot_delay": 0, "disconnect_grace": 0, "posso_window": 1, "posso_answer": 1}


def _two_posso_games(base: str) -> tuple[str, list[str], str]:
    """A room's code, its two finished games' ids and the host's seat token."""
    with httpx.Client(base_url=base, cookies={GUEST_COOKIE: HOST}) as http:
        made = http.post(
            "/api/rooms",
            json={
                "game": "posso",
                "name": "Printer",
                "options": {"start_hand": 8, "cutting": "off"},
                "settings": FAST,
            },
        ).json()
        code, token = made["code"], made["token"]
        for _ in range(2):
            room_command(base, code, token, "add_bot")
        room_command(base, code, token, "start")
        until_finished(http, code, 1)
        room_command(base, code, token, "rematch")
        until_finished(http, code, 2)
        games = http.get("/api/me/games").json()["games"]
    # in the order played (the list is newest first)
    return code, [g["id"] for g in games if g["room"] == code][::-1], token


def _page_as_host(pages: Pages, path: str, seat: tuple[str, str] | None = None) -> Any:
    """A page in the host's browser (their guest cookie; their seat in a room)."""
    ctx = pages.browser.new_context(viewport=LAPTOP)
    ctx.set_default_timeout(20_000)
    ctx.add_cookies([{"name": GUEST_COOKIE, "value": HOST, "url": pages.base}])
    if seat is not None:
        code, token = seat
        held = json.dumps({"token": token, "seat": 0, "name": "Printer"})
        ctx.add_init_script(f"localStorage.setItem('cardroom:room:{code}', {json.dumps(held)});")
    pages.contexts.append(ctx)
    page = ctx.new_page()
    page.on("pageerror", lambda e: pages.errors.append(f"page error: {e}"))
    page.goto(pages.base + path)
    return page


def _pdf_pages(pdf: Path) -> list[str]:
    """The PDF's text, page by page (read with pypdf: nothing but pip needed)."""
    text = [page.extract_text() for page in PdfReader(pdf).pages]
    return [p for p in text if p.strip()]


def test_printed_sheets_are_one_page_per_game_with_the_chart(
    pages: Pages, server: str, tmp_path: Path
) -> None:
    code, ids, _ = _two_posso_games(server)
    assert len(ids) == 2
    with httpx.Client(base_url=server, cookies={GUEST_COOKIE: HOST}) as http:
        sheets = [http.get(f"/api/history/games/{g}/sheet").json() for g in ids]
    page = _page_as_host(pages, f"/#sheets/{code}")
    page.wait_for_selector("body[data-sheets='2']")
    page.wait_for_selector(".printsheet svg.chart")
    pdf = tmp_path / "evening.pdf"
    page.pdf(path=str(pdf), format="A4")
    printed = _pdf_pages(pdf)
    assert len(printed) == 2, f"{len(printed)} pages:\n" + "\n----\n".join(printed)
    for text, sheet in zip(printed, sheets, strict=True):
        assert f"room {code}" in text
        assert "Hand" in text and "Total" in text
        assert "500 · the toilet" in text  # the chart, printed with its sheet
        for seat in sheet["seats"]:
            assert seat["name"] in text
        final = [ln["total"] for ln in sheet["hands"][-1]["lines"]]
        for total in final:
            assert str(total) in text
        assert "My games" not in text and "Replay" not in text  # only the sheet prints

    game = _page_as_host(pages, f"/#game/{ids[0]}")
    game.wait_for_selector(".printsheet svg.chart")
    one = tmp_path / "game.pdf"
    game.pdf(path=str(one), format="A4")
    printed = _pdf_pages(one)
    assert len(printed) == 1 and "500 · the toilet" in printed[0]


def test_the_person_page_and_the_evening_show_the_games(pages: Pages, server: str) -> None:
    code, ids, token = _two_posso_games(server)
    me = person_of(guest_key(HOST), None)  # rooms know a guest by its cookie's hash
    page = _page_as_host(pages, "/#me")
    page.wait_for_selector("h1:has-text('Printer (you)')")
    assert "Sign in to keep them across devices" in page.inner_text("main")
    assert page.inner_text("main").count("Posso ·") >= 2
    link = page.locator(f"a[href='/api/people/{me}/games.csv']")
    assert link.count() == 1
    shoot(page, "records-person")
    evening = _page_as_host(pages, f"/#evening/{code}")
    evening.wait_for_selector("table.league")
    text = evening.inner_text("main")
    assert "Printer" in text and evening.locator("ol.games li").count() == 2
    # each column explained: in its header's tooltip and in the key below
    heads = evening.eval_on_selector_all("table.league th", "els => els.map(e => e.title)")
    assert heads and all(heads), heads
    assert evening.locator("dl.league-key dt").count() == len(heads)
    # the room page itself: its Evening tab
    room = _page_as_host(pages, f"/r/{code}", seat=(code, token))
    room.click("button[data-tab='evening']")
    room.wait_for_selector(".evening table.league")
    assert room.locator(".evening ol.games li").count() == 2
    shoot(room, "records-room-evening")
    game = _page_as_host(pages, f"/#game/{ids[-1]}")
    game.wait_for_selector("a.person")
    assert game.locator("a.person").first.get_attribute("href") == f"/#person/{me}"
    assert game.locator(f"a[href='/api/history/games/{ids[-1]}/record']").count() == 1
