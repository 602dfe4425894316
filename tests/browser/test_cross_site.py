"""A hostile web page, in Chromium: a page of another origin that a guest of
the card room visits posts forms to the card room and opens a socket to it
(app/api/origins.py refuses them), and the guest's identity is untouched.

Two hostile origins: `localhost` on another port (another site: the
guest's SameSite=Lax cookie is not sent with the post, but the answer could
set a new one) and 127.0.0.1 on another port (the same site, another
origin: the cookie is sent).  The guest's own page - the real client, which
creates a room through the UI - keeps working beside them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.browser.conftest import Pages
from tests.browser.play import create_room, wait_until

pytestmark = pytest.mark.browser

GUEST = "cardroom_guest"


class Hostile:
    """Another origin's pages: `pages[path]` is served as HTML."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        pages = self.pages

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = pages.get(self.path, "").encode()
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(10)


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    h = Hostile()
    try:
        yield h
    finally:
        h.close()


def _form(action: str, fields: dict[str, str] | None = None, enctype: str = "") -> str:
    inputs = "".join(
        f"<input type='hidden' name='{name}' value='{value}'>"
        for name, value in (fields or {}).items()
    )
    kind = f" enctype='{enctype}'" if enctype else ""
    return (
        f"<!doctype html><form id='f' method='POST' action='{action}'{kind}>{inputs}</form>"
        "<script>document.getElementById('f').submit()</script>"
    )


SOCKET = """<!doctype html><script>
window.outcome = new Promise((done) => {
  const ws = new WebSocket("%s");
  ws.onopen = () => { done("open"); ws.close(); };
  ws.onerror = () => done("error");
  ws.onclose = (e) => done("closed " + e.code);
});
</script>"""


def _guest_cookie(context: Any, base: str) -> str:
    cookies = [c for c in context.cookies(base) if c["name"] == GUEST]
    assert len(cookies) == 1, cookies
    return str(cookies[0]["value"])


def _room_people(page: Any, code: str) -> Any:
    return page.evaluate(
        "async (code) => { const r = await fetch(`/api/rooms/${code}`); return r.json(); }", code
    )


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"], ids=["cross-site", "same-site"])
def test_a_hostile_page_cannot_sign_a_guest_out_join_for_them_or_open_their_socket(
    pages: Pages, server: str, hostile: Hostile, host: str
) -> None:
    guest = pages.open("/")
    create_room(guest, "Ann", "bigtwo")  # the real client writes, from its own origin
    code = guest.url.rsplit("/r/", 1)[1]
    context = guest.context
    cookie = _guest_cookie(context, server)
    person = guest.evaluate("async () => (await (await fetch('/api/me/person')).json()).person")
    before = _room_people(guest, code)

    evil = f"http://{host}:{hostile.port}"
    hostile.pages["/signout"] = _form(f"{server}/api/accounts/signout")
    # a JSON body smuggled in a text/plain form: {"name": "Mallory", "x": "="}
    hostile.pages["/join"] = _form(
        f"{server}/api/rooms/{code}/join",
        {'{"name": "Mallory", "x": "': '"}'},
        enctype="text/plain",
    )
    ws_url = server.replace("http://", "ws://") + f"/ws/rooms/{code}"
    hostile.pages["/socket"] = SOCKET % ws_url

    for path in ("/signout", "/join"):
        tab = context.new_page()
        with tab.expect_response(lambda r: r.url.startswith(server)) as answered:
            tab.goto(evil + path)
        response = answered.value
        assert response.status == 403, (path, response.status, response.text())
        assert response.json()["detail"]["code"] == "cross_site"
        assert "set-cookie" not in response.headers
        tab.close()
    assert _guest_cookie(context, server) == cookie
    assert guest.evaluate(
        "async () => (await (await fetch('/api/me/person')).json()).person"
    ) == person  # fmt: skip
    assert _room_people(guest, code) == before  # Mallory never joined

    tab = context.new_page()
    tab.goto(evil + "/socket")
    assert tab.evaluate("() => window.outcome") != "open"
    tab.close()
    # the same socket from the card room's own page opens (the check above
    # could have seen an open socket)
    guest.evaluate(f"() => {{ window.outcome = null; {_opener(ws_url)} }}")
    wait_until(lambda: guest.evaluate("() => window.outcome") is not None, 15, "own socket")
    assert guest.evaluate("() => window.outcome") == "open"


def _opener(url: str) -> str:
    return (
        f'const ws = new WebSocket("{url}");'
        'ws.onopen = () => { window.outcome = "open"; ws.close(); };'
        'ws.onerror = () => { window.outcome = window.outcome || "error"; };'
    )
