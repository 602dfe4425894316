"""Security headers on every HTTP response, and a client that lives within
its Content-Security-Policy (the browser test in tests/browser/test_secrets.py
plays a whole game under it)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from app.main import STATIC_DIR


@pytest.mark.parametrize(
    "path", ["/", "/r/ABCD2345EFGH", "/js/net.js", "/css/app.css", "/api/health", "/nowhere"]
)
def test_every_response_carries_the_security_headers(client: TestClient, path: str) -> None:
    r = client.get(path)
    csp = {
        part.split()[0]: part.split()[1:]
        for part in r.headers["content-security-policy"].split("; ")
    }
    assert csp["frame-ancestors"] == ["'none'"]
    assert csp["script-src"] == ["'self'"] and csp["default-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-frame-options"] == "DENY"


def test_refusals_carry_them_too(client: TestClient) -> None:
    r = client.post("/api/rooms", json={"game": "chess", "name": "A"})
    assert r.status_code == 400 and "frame-ancestors 'none'" in r.headers["content-security-policy"]


class _Inline(HTMLParser):
    """Collects what a strict CSP would block in a page: inline script, event
    handler attributes, inline style attributes and javascript: links."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script":
            self._in_script = True
            if "src" not in names:
                self.found.append("an inline <script>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"a {name} handler on <{tag}>")
            if name == "style":
                self.found.append(f"a style attribute on <{tag}>")
            if value and value.strip().lower().startswith("javascript:"):
                self.found.append(f"a javascript: URL on <{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.found.append("script text")


def test_the_pages_hold_no_inline_script_or_style() -> None:
    pages = sorted(STATIC_DIR.glob("**/*.html"))
    assert pages
    for page in pages:
        parser = _Inline()
        parser.feed(page.read_text())
        assert parser.found == [], f"{page.name}: {parser.found}"
