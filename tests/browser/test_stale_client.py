"""A tab open on a server that is upgraded under it: it learns the new build
when its socket comes back, keeps the old page while it is the player's turn,
and reloads itself (on the new build, still in its seat) once the move is made
(app/api/client.py, static/js/build.js)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.api.client import build_id
from app.main import STATIC_DIR
from tests.browser.conftest import ROOT, Pages, _wait_up, shoot
from tests.browser.play import create_room, my_turn, pick_until_ready, wait_until
from tests.services import OPEN_DOORS_ENV, free_port, uvicorn_command

pytestmark = pytest.mark.browser


class Upgradable:
    """uvicorn serving a copy of the client that the test can change, on one
    port and one database across restarts."""

    def __init__(self, tmp: Path) -> None:
        self.static = tmp / "static"
        shutil.copytree(STATIC_DIR, self.static)
        self.data = tmp / "data"
        self.data.mkdir()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            **OPEN_DOORS_ENV,
            "DATA_DIR": str(self.data),
            "STATIC_DIR": str(self.static),
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("DATABASE_URL", None)
        self.env.pop("REDIS_URL", None)
        alembic = Path(sys.executable).parent / "alembic"
        subprocess.run([str(alembic), "upgrade", "head"], cwd=ROOT, env=self.env, check=True)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.data / "server.log"
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                uvicorn_command("app.main:app", port=self.port),
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        _wait_up(f"{self.base}/api/health", self.proc, log)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def upgrade(self) -> str:
        """Stop, change the client, start again: the new build id."""
        self.stop()
        css = self.static / "css" / "app.css"
        css.write_text(css.read_text() + "\n/* the next release */\n")
        self.start()
        return build_id(self.static)


@pytest.fixture
def upgradable(tmp_path: Path, chromium_path: str) -> Iterator[Upgradable]:
    server = Upgradable(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


ENTRY_BUILD = """() => {
  const src = document.querySelector("script[type=module]")?.src || "";
  return (src.match(/\\/b\\/([0-9a-f]+)\\//) || [])[1] || null;
}"""


def page_build(page: Any) -> str | None:
    """The build this page runs, from its entry module's address; None while
    the page is being replaced."""
    try:
        return page.evaluate(ENTRY_BUILD)
    except Exception:  # the page is navigating
        return None


def test_an_upgraded_server_reloads_the_tab_once_the_players_move_is_made(
    browser: Any, upgradable: Upgradable
) -> None:
    pages = Pages(browser, upgradable.base)
    try:
        old = build_id(upgradable.static)
        ann = pages.open("/")
        assert page_build(ann) == old
        # Big Two against three bots that take a second each: room to see
        # that the tab waits for her move and reloads before her next turn
        create_room(ann, "Ann", "bigtwo", settings={"bot_delay": "1.5"}, bots=3)
        ann.wait_for_selector("#start")
        ann.click("#start")
        ann.wait_for_selector(".tablebox.bigtwo")
        wait_until(lambda: my_turn(ann), 60, "Ann's turn")
        ann.evaluate("() => { window.sameTab = true; }")

        new = upgradable.upgrade()
        assert new != old
        # the socket comes back and the server says it runs another client
        ann.wait_for_function(f"() => document.body.dataset.staleBuild === '{new}'")
        # it is her turn: the tab does not reload under her
        ann.wait_for_timeout(2500)
        assert ann.evaluate("() => window.sameTab === true"), "reloaded in the middle of a turn"
        assert my_turn(ann) and page_build(ann) == old
        shoot(ann, "stale-client-waiting")

        assert pick_until_ready(ann), "Ann's turn lit no play"
        ann.click("[data-key=play][data-ready=true]")
        deadline = time.monotonic() + 20
        while page_build(ann) != new:
            assert time.monotonic() < deadline, "the tab did not reload after the move"
            time.sleep(0.1)
        # the new page: the new client, still Ann's seat at the same game
        ann.wait_for_selector(".tablebox.bigtwo")
        assert not ann.evaluate("() => window.sameTab === true")
        assert ann.locator(".hand .card").count() < 13
        assert not pages.errors, pages.errors
    finally:
        pages.close()


#: the page's own build.js (the same module instance its pages use)
BUILD_MODULE = """async () => {
  const src = document.querySelector("script[type=module]").src.replace(/main\\.js$/, "build.js");
  window.build = await import(src);
  window.sameTab = true;
}"""


def test_a_page_without_a_room_reloads_at_the_next_navigation_and_never_in_a_loop(
    pages: Pages,
) -> None:
    page = pages.open("/")
    page.wait_for_selector("#create-name")
    page.evaluate(BUILD_MODULE)
    page.evaluate("() => window.build.serverBuild('feedbeef0000')")  # as an X-Build would
    page.wait_for_timeout(1500)
    assert page.evaluate("() => window.sameTab === true"), "reloaded with nobody going anywhere"
    page.evaluate("() => { location.hash = '#history'; }")
    page.wait_for_function("() => window.sameTab === undefined")  # a fresh page...
    page.wait_for_selector(".history h1")  # ...at the page asked for
    # the same server answered with the same client: told again, the tab does
    # not reload again, it just goes where it was asked
    page.evaluate(BUILD_MODULE)
    page.evaluate("() => window.build.serverBuild('feedbeef0000')")
    page.evaluate("() => { location.hash = ''; }")
    page.wait_for_selector("#create-name")
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.sameTab === true"), "a second reload for the same build"
