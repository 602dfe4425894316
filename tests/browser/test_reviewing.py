"""Looking back at finished games: a replay jumps to any Posso hand or Big
Two trick, a score-sheet row opens the replay at its hand (also from a link),
the phone's list of games shows every column with its Replay link in reach,
and a game-over card or a Posso hand's results closed at the table stay closed
after a refresh."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.api.identity import GUEST_COOKIE
from tests.browser.conftest import LAPTOP, PHONE, Pages, shoot
from tests.browser.play import room_command, until_finished

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

REVIEWER = "guest-reviewer-" + "r" * 40
#: bots move at once; the host's seat gets a stand-in as soon as the host leaves
FAST = {"bot_delay": 0, "disconnect_grace": 0, "posso_window": 1, "posso_answer": 1}
#: as FAST, but hand 10 lasts long enough for Rita's page to open in it: at
#: once, bots can play a whole hand in the second her browser takes to start
PACED = {**FAST, "bot_delay": 0.03}


@dataclass
class Played:
    code: str
    token: str
    game: int
    chapters: dict[str, Any]


def _finished(base: str, game: str, options: dict[str, Any], bots: int) -> Played:
    """A room whose one game the bots played to its end for the reviewer."""
    with httpx.Client(base_url=base, cookies={GUEST_COOKIE: REVIEWER}) as http:
        made = http.post(
            "/api/rooms",
            json={"game": game, "name": "Rita", "options": options, "settings": FAST},
        ).json()
        code, token = made["code"], made["token"]
        for _ in range(bots):
            room_command(base, code, token, "add_bot")
        room_command(base, code, token, "start")
        until_finished(http, code, 1)
        mine = http.get("/api/me/games").json()["games"]
        gid = next(g["id"] for g in mine if g["room"] == code)
        first = http.get(f"/api/history/games/{gid}/replay").json()
    return Played(code, token, gid, first["chapters"])


@pytest.fixture(scope="module")
def posso(server: str) -> Played:
    return _finished(server, "posso", {"start_hand": 8, "cutting": "off"}, 2)


@pytest.fixture(scope="module")
def bigtwo(server: str) -> Played:
    return _finished(server, "bigtwo", {}, 3)


@pytest.fixture
def reviewer(pages: Pages) -> Iterator[Any]:
    """Opens pages in the reviewer's browser (their guest cookie)."""

    def open_page(path: str, *, phone: bool = False, seat: Played | None = None) -> Any:
        ctx = pages.browser.new_context(
            viewport=PHONE if phone else LAPTOP, is_mobile=phone, has_touch=phone
        )
        ctx.set_default_timeout(20_000)
        ctx.add_cookies([{"name": GUEST_COOKIE, "value": REVIEWER, "url": pages.base}])
        if seat is not None:
            held = json.dumps({"token": seat.token, "seat": 0, "name": "Rita"})
            ctx.add_init_script(
                f"localStorage.setItem('cardroom:room:{seat.code}', {json.dumps(held)});"
            )
        pages.contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda e: pages.errors.append(f"page error: {e}"))
        page.goto(pages.base + path)
        return page

    yield open_page


AT = """([step, part]) => {
  const text = document.querySelector(".replay .stepinfo")?.textContent || "";
  return new RegExp(`^Step ${step ?? "\\\\d+"} of \\\\d+ · ${part}$`).test(text);
}"""


def wait_at(page: Any, part: str, step: int | None = None) -> None:
    """Wait until the replay says it shows `step` (any, if None), in `part`
    (e.g. "Hand 9")."""
    page.wait_for_function(AT, arg=[step, part])


def _step_of(chapters: dict[str, Any], n: int) -> int:
    return int(next(m["step"] for m in chapters["marks"] if m["n"] == n))


def test_a_posso_replay_jumps_to_any_hand_and_a_sheet_row_opens_it(
    reviewer: Any, posso: Played
) -> None:
    assert posso.chapters["unit"] == "hand"
    assert [m["n"] for m in posso.chapters["marks"]] == [8, 9, 10]
    page = reviewer(f"/#game/{posso.game}")
    page.wait_for_selector("body[data-replay-chapters='3']")
    page.wait_for_selector("table.sheet tr.hasreplay")
    wait_at(page, "Hand 8", 0)

    page.select_option(".replay select.jump", label="Hand 10")
    wait_at(page, "Hand 10", _step_of(posso.chapters, 10))
    page.click("[aria-label='Previous hand']")  # at a hand's start: the one before
    nine = _step_of(posso.chapters, 9)
    wait_at(page, "Hand 9", nine)
    page.click("[aria-label='Next step']")
    wait_at(page, "Hand 9", nine + 1)
    page.click("[aria-label='Previous hand']")  # inside a hand: back to its start
    wait_at(page, "Hand 9", nine)

    # a row of the sheet (anywhere on it) opens the replay at that hand
    page.locator("table.sheet tbody tr.hasreplay").nth(2).locator("td").first.click()
    wait_at(page, "Hand 10", _step_of(posso.chapters, 10))
    assert page.url.endswith(f"#game/{posso.game}/hand/10")
    assert page.locator(".replay select.jump").input_value() == "2"
    shoot(page, "replay-opened-at-hand-10")

    # the address is a link to that hand: opened afresh, the replay starts there
    again = reviewer(f"/#game/{posso.game}/hand/9")
    wait_at(again, "Hand 9", _step_of(posso.chapters, 9))
    # the evening's sheets link each hand to its replay too
    sheets = reviewer(f"/#sheets/{posso.code}")
    sheets.click("table.sheet tbody tr.hasreplay >> nth=1 >> a.replayhand")
    wait_at(sheets, "Hand 9", _step_of(posso.chapters, 9))


def test_a_big_two_replay_jumps_trick_by_trick(reviewer: Any, bigtwo: Played) -> None:
    marks = bigtwo.chapters["marks"]
    assert bigtwo.chapters["unit"] == "trick" and len(marks) >= 5
    page = reviewer(f"/#game/{bigtwo.game}")
    page.wait_for_selector(f"body[data-replay-chapters='{len(marks)}']")
    for n in (2, 3):
        page.click("[aria-label='Next trick']")
        wait_at(page, f"Trick {n}", _step_of(bigtwo.chapters, n))
    page.select_option(".replay select.jump", label="Trick 5")
    wait_at(page, "Trick 5", _step_of(bigtwo.chapters, 5))
    # a new trick: the table is clear, someone has the lead
    assert page.locator(".replay .felt .trick.cleared").count() == 1
    assert "control" in page.locator(".replay .felt .trick .hint-box").inner_text()


INSIDE = """(el) => { const r = el.getBoundingClientRect();
  return r.left >= 0 && r.right <= window.innerWidth && r.width > 0; }"""


def test_the_phone_history_shows_every_column_and_its_replay_link(
    reviewer: Any, posso: Played, bigtwo: Played
) -> None:
    page = reviewer("/#history", phone=True)
    page.wait_for_selector("table.list tbody tr")
    rows = page.locator("table.list tbody tr")
    assert rows.count() >= 2
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td")
        assert cells.count() == 5
        for k in range(5):
            cell = cells.nth(k)
            assert cell.evaluate(INSIDE), f"row {i} column {k} is cut off"
        for label in ("When", "Game", "Players", "Result"):
            cell = rows.nth(i).locator(f"td[data-label='{label}']")
            assert cell.is_visible()
            # one piece beside its label: never a list broken into fragments
            assert cell.evaluate("e => e.childNodes.length") == 1, cell.inner_html()
    link = page.locator(f"table.list a[href='/#game/{posso.game}']")
    link.scroll_into_view_if_needed()
    box = link.bounding_box()
    assert box is not None and box["height"] >= 44 and box["x"] + box["width"] <= PHONE["width"]
    shoot(page, "history-phone")
    link.click()
    page.wait_for_selector("body[data-replay-chapters='3']")
    assert page.url.endswith(f"#game/{posso.game}")
    # the replay's hand controls fit the phone too
    hands = ("[aria-label='Previous hand']", ".replay select.jump", "[aria-label='Next hand']")
    for control in hands:
        assert page.locator(control).evaluate(INSIDE), f"{control} is cut off"


def test_a_closed_game_over_card_stays_closed_after_a_refresh(
    reviewer: Any, bigtwo: Played
) -> None:
    page = reviewer(f"/r/{bigtwo.code}", seat=bigtwo)
    page.wait_for_selector(".result[role=dialog]")
    page.click(".result button:has-text('Look at the table')")
    assert page.locator(".result").count() == 0
    page.reload()
    page.wait_for_selector(".tablebox.bigtwo")
    page.wait_for_function("() => document.body.dataset.room === 'finished'")
    page.wait_for_timeout(500)  # a late view would bring it back
    assert page.locator(".result").count() == 0, "the game-over card came back"
    # the next game's card is its own: after a rematch (the bots finish it
    # once Rita has gone) her card is there again
    page.context.close()
    base = page.url.split("/r/")[0]
    room_command(base, bigtwo.code, bigtwo.token, "rematch")
    with httpx.Client(base_url=base) as http:
        until_finished(http, bigtwo.code, 2)
    back = reviewer(f"/r/{bigtwo.code}", seat=bigtwo)
    back.wait_for_selector(".result[role=dialog]")


def test_posso_hand_results_closed_at_the_table_stay_closed_after_a_refresh(
    reviewer: Any, server: str
) -> None:
    """Rita lets the bot play her turns in hand 9 and steps away, comes back
    in hand 10 to its results, closes them, and refreshes: they stay closed.

    The results close by themselves at hand 10's first discard, so only Rita
    may make it: hand 10's first turn is hers (first_dealer 1: Bot 2 deals
    hand 9, Bot 3 hand 10, and Rita sits on Bot 3's left), her autoplay ends
    with hand 9, and no bot stands in for her while she is away (a long
    disconnect_grace).  Hand 10 then waits for her however slowly her page
    opens (a second late was enough to miss the results when Bot 3 played
    first): they stay until she plays (checked below: the page asks her)."""
    with httpx.Client(base_url=server, cookies={GUEST_COOKIE: REVIEWER}) as http:
        made = http.post(
            "/api/rooms",
            json={
                "game": "posso",
                "name": "Rita",
                "options": {"start_hand": 9, "cutting": "off", "first_dealer": 1},
                "settings": {**PACED, "disconnect_grace": 600},
            },
        ).json()
        played = Played(made["code"], made["token"], 0, {})
        for _ in range(2):
            room_command(server, played.code, played.token, "add_bot")
        room_command(server, played.code, played.token, "start")
        room_command(server, played.code, played.token, "autoplay", on=True)
        mine = http.get("/api/me/games").json()["games"]
        gid = next(g["id"] for g in mine if g["room"] == played.code)
        deadline = time.monotonic() + 120
        while not http.get(f"/api/history/games/{gid}/sheet").json()["hands"]:
            assert time.monotonic() < deadline, "hand 9 did not end"
            time.sleep(0.2)
    page = reviewer(f"/r/{played.code}", seat=played)
    page.wait_for_selector(".lasthand:has-text('Hand 9 is over')")
    page.click(".lasthand [data-key=lasthand-ok]")
    assert page.locator(".lasthand").count() == 0
    page.reload()
    page.wait_for_selector(".tablebox.posso")
    page.wait_for_timeout(500)
    assert page.evaluate("() => document.body.dataset.room") == "playing"  # still hand 10
    # hand 10 waits on Rita, who has not played (the upturn's Posso window, a
    # bot's call on it to answer, or her first turn): before its first
    # discard, where a page that forgot would show them again
    asked = page.evaluate("() => document.body.dataset.asked")
    assert asked, "hand 10 should wait on Rita"
    assert page.locator(".lasthand").count() == 0, "the hand's results came back"

    # the live sheet's row opens that hand's replay in another tab
    page.click("[data-tab=sheet]")
    with page.context.expect_page() as opened:
        page.locator(".livesheet tbody tr.hasreplay").first.locator("td").first.click()
    replay = opened.value
    wait_at(replay, "Hand 9", 0)
    assert replay.url.endswith(f"#game/{gid}/hand/9")
    assert page.evaluate("() => document.body.dataset.room") == "playing"  # the table stays
