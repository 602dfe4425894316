"""End-to-end fixtures: the real app under a real uvicorn on a free port, and
Debian's Chromium driven by Playwright (never `playwright install`).

Pages are opened from http://127.0.0.1:<port> so their WebSockets connect.
The database is a fresh SQLite file per session, migrated by Alembic, so the
history pages have something real to read.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.services import free_port, require_chromium, uvicorn_command

ROOT = Path(__file__).resolve().parents[2]
#: where screenshots go: artifacts/screenshots/ (git ignores artifacts/), or the
#: folder CI names in SCREENSHOTS_DIR to keep them as build artifacts
SHOTS = Path(os.environ.get("SCREENSHOTS_DIR") or ROOT / "artifacts" / "screenshots")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def _wait_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not come up:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    return require_chromium()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, chromium_path: str) -> Iterator[str]:
    """The app, served by uvicorn from this checkout, on a free 127.0.0.1 port."""
    data = tmp_path_factory.mktemp("data")
    # one address plays every part in every test: lift the per-address limits
    doors = {"ROOMS_PER_HOUR": "100000", "JOINS_PER_MINUTE": "100000"}
    doors |= {"LOOKUPS_PER_MINUTE": "100000", "SIGNINS_PER_MINUTE": "100000"}
    env = {**os.environ, "DATA_DIR": str(data), "PYTHONUNBUFFERED": "1", **doors}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    bin_dir = Path(sys.executable).parent
    if (ROOT / "alembic.ini").exists():
        subprocess.run(
            [str(bin_dir / "alembic"), "upgrade", "head"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
    port = free_port()
    log = data / "server.log"
    # E2E_APP / E2E_APP_DIR serve another ASGI app (e.g. one registering an
    # engine before the main app does); the default is the real app.
    app_args = [os.environ.get("E2E_APP", "app.main:app")]
    if os.environ.get("E2E_APP_DIR"):
        app_args += ["--app-dir", os.environ["E2E_APP_DIR"]]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            uvicorn_command(*app_args, port=port),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_up(f"{base}/api/health", proc, log)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    """One Chromium per module: Playwright's sync API keeps an asyncio loop
    running in the main thread while it is open, so it closes before a test
    of another module runs in this process.  With the suite in two processes
    (Makefile JOBS), a process that has run browser tests may take asyncio
    tests from the other's queue; a session-wide browser failed the first of
    them ("Runner.run() cannot be called from a running event loop")."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Pages:
    """Opens pages in fresh browser contexts (each its own localStorage, like
    separate people) and collects their console errors."""

    def __init__(self, browser: Any, base: str) -> None:
        self.browser = browser
        self.base = base
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def open(self, path: str = "/", *, phone: bool = False, **context: Any) -> Any:
        """`context`: more browser-context options (e.g. bypass_csp=True)."""
        ctx = self.browser.new_context(
            viewport=PHONE if phone else LAPTOP,
            device_scale_factor=2 if phone else 1,
            is_mobile=phone,
            has_touch=phone,
            **context,
        )
        ctx.set_default_timeout(15_000)
        self.contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.goto(self.base + path)
        return page

    def close(self) -> None:
        for c in self.contexts:
            c.close()


@pytest.fixture
def pages(browser: Any, server: str) -> Iterator[Pages]:
    p = Pages(browser, server)
    try:
        yield p
        assert not p.errors, f"JavaScript errors on the page: {p.errors}"
    finally:
        p.close()


#: what a failed test's report shows of each page it opened
PAGE_STATE = """() => JSON.stringify({
  url: location.pathname + location.hash,
  body: {...document.body.dataset},
  text: document.body.innerText.slice(-1500),
})"""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed browser test's report ends with what each of its pages showed
    then: the room's version and state on <body>, and the end of the page's
    text, where the log of the latest moves is.  A flake seen once in CI is
    then read from the report, not guessed at (the same dump, taken by hand,
    found test_reviewing's).  A page too busy to answer holds the report up
    until the suite's own per-test timeout (pytest-timeout, pyproject.toml)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    opened = [v for v in getattr(item, "funcargs", {}).values() if isinstance(v, Pages)]
    for n, page in enumerate(pg for p in opened for c in p.contexts for pg in c.pages):
        try:
            state = page.evaluate(PAGE_STATE)
        except Exception as err:  # closed, crashed or navigating: say so
            state = f"(could not be read: {err})"
        report.sections.append((f"page {n + 1} when the test failed", state))


def shoot(page: Any, name: str) -> Path:
    """Save a screenshot under SHOTS (artifacts/screenshots/ unless SCREENSHOTS_DIR says)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path
