"""Reconnecting (static/js/net.js): waits that grow with jitter, never shorter
than a refusal's retry_after; after a few refused tries the page stops and
says so once, plainly, with a button that tries again - never a pile of
messages, never a loop that spends the address's lookups for ever."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from tests.browser.conftest import Pages, shoot

#: a WebSocket that, while `__refuse` is set, is refused as a rate-limited
#: server refuses one (an error with retry_after, then close 4429); each try's
#: time goes in `__tries`
GATE = """
(() => {
  const Real = window.WebSocket;
  window.__tries = [];
  window.__refuse = true;
  class Gate {
    constructor(url) {
      window.__tries.push(Date.now());
      if (!window.__refuse) return new Real(url);
      this.readyState = 0;
      setTimeout(() => {
        this.readyState = 1;
        if (this.onopen) this.onopen();
        const error = { code: "rate_limited", retry_after: 1,
          message: "too many room lookups from your address: try again in 1 s" };
        if (this.onmessage) this.onmessage({ data: JSON.stringify({ re: null, error, v: 0 }) });
        this.readyState = 3;
        if (this.onclose) this.onclose({ code: 4429, reason: "too many room lookups" });
      }, 5);
    }
    send() {}
    close() {}
  }
  Object.assign(Gate, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
  window.WebSocket = Gate;
})();
"""

NET = "import(document.querySelector('script[type=module]').src.replace('main.js', 'net.js'))"


def test_waits_grow_with_jitter_and_honour_retry_after(pages: Pages) -> None:
    page = pages.open("/")
    page.wait_for_selector("#create-name")
    got = page.evaluate(
        f"""async () => {{
          const m = await {NET};
          const d = (a, r, x) => m.backoffDelay(a, r, () => x);
          return {{
            low: d(3, 0, 0), high: d(3, 0, 1), cap: d(20, 0, 1), capLow: d(20, 0, 0),
            asked: d(0, 30, 1), first: d(0, 0, 0.5), giveUp: m.BACKOFF.GIVE_UP,
          }};
        }}"""
    )
    first, last = 500, 20_000
    assert got["low"] == 8 * first / 2 and got["high"] == 8 * first  # half to all of it
    assert got["cap"] == last and got["capLow"] == last / 2  # never longer than LAST_MS
    assert got["asked"] == 30_000  # retry_after wins over a shorter wait
    assert first / 2 <= got["first"] <= first
    assert 3 <= got["giveUp"] <= 12


def test_a_refused_page_says_so_once_then_gives_up_with_a_button(pages: Pages, server: str) -> None:
    with httpx.Client(base_url=server) as http:
        ann = http.post("/api/rooms", json={"game": "posso", "name": "Ann"}).json()
    code = ann["code"]
    page = pages.open("/")
    seat = {"token": ann["token"], "seat": 0, "name": "Ann"}
    page.context.add_init_script(
        GATE + f"localStorage.setItem('cardroom:room:{code}', {json.dumps(json.dumps(seat))});"
    )
    page.goto(f"{server}/r/{code}")
    # three tries after the first (quick ones: the test shortens the waits,
    # but retry_after says 1 s and must be honoured)
    page.evaluate(
        f"async () => {{ const m = await {NET}; Object.assign(m.BACKOFF, "
        "{ FIRST_MS: 20, LAST_MS: 40, GIVE_UP: 3 }); }"
    )
    page.wait_for_selector(".loading.gaveup button", timeout=15_000)
    tries = page.evaluate("() => window.__tries")
    gaps = [b - a for a, b in itertools.pairwise(tries)]
    assert len(tries) == 4, tries
    assert all(gap >= 950 for gap in gaps), f"retry_after not honoured: {gaps}"
    # one plain message with its reason, and nothing piled up beside it
    text = page.text_content(".loading.gaveup") or ""
    assert "Could not reach the room" in text and "Too many room lookups" in text, text
    assert page.locator(".toast").count() == 0
    assert page.evaluate("() => document.querySelector('#netstatus').hidden")
    page.wait_for_timeout(1500)
    assert len(page.evaluate("() => window.__tries")) == 4, "it kept trying after giving up"
    shoot(page, "reconnect-gave-up")
    # the button tries again, and this time the room lets it in
    page.evaluate("() => { window.__refuse = false; }")
    page.click(".loading.gaveup button")
    page.wait_for_function("() => document.body.dataset.room === 'lobby'")
    assert page.locator(".toast").count() == 0


def test_while_refused_the_line_says_what_and_is_not_repeated(pages: Pages, server: str) -> None:
    with httpx.Client(base_url=server) as http:
        ann = http.post("/api/rooms", json={"game": "posso", "name": "Ann"}).json()
    code = ann["code"]
    page: Any = pages.open("/")
    seat = {"token": ann["token"], "seat": 0, "name": "Ann"}
    page.context.add_init_script(
        GATE + f"localStorage.setItem('cardroom:room:{code}', {json.dumps(json.dumps(seat))});"
    )
    page.goto(f"{server}/r/{code}")
    page.wait_for_function("() => window.__tries.length >= 2")
    assert page.locator(".loading p").count() == 1
    line = page.text_content(".loading p") or ""
    assert "reconnecting" in line and "Too many room lookups" in line, line
    assert page.locator(".toast").count() == 0
