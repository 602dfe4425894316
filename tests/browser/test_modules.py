"""The client's own logic, run in the real browser on the served modules:
the socket notices a version gap and asks for a fresh view, stops waiting on
a dead connection when the browser goes offline, and Posso runs are laid out
low to high with wilds where they stand."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Pages

pytestmark = pytest.mark.browser

# A stand-in WebSocket that records what the client sends and lets the test
# deliver server messages.
FAKE_SOCKET = """() => {
window.sent = [];
window.sockets = [];
class FakeSocket {
  constructor(url) { this.url = url; this.readyState = 0; window.sockets.push(this); }
  send(text) { window.sent.push(JSON.parse(text)); }
  close() { this.readyState = 3; }
  open() { this.readyState = 1; this.onopen && this.onopen(); }
  deliver(msg) { this.onmessage({ data: JSON.stringify(msg) }); }
}
FakeSocket.OPEN = 1;
window.WebSocket = FakeSocket;
}"""


def run(page: Any, body: str) -> Any:
    return page.evaluate(f"async () => {{ {body} }}")


def run_socket(pages: Pages, listen: str, body: str) -> Any:
    """Run `body` against an open RoomSocket `s` (token "tok") over the fake
    socket `ws`; `listen` adds its listeners before it connects."""
    page = pages.open("/")
    page.evaluate(FAKE_SOCKET)
    return run(
        page,
        f"""
        const {{ RoomSocket }} = await import("/js/net.js");
        const s = new RoomSocket("ABC123", "tok");
        {listen}
        s.connect();
        let ws = window.sockets[0];
        ws.open();
        {body}
        """,
    )


def test_a_version_gap_asks_for_a_fresh_view_and_resume_uses_since(pages: Pages) -> None:
    out = run_socket(
        pages,
        """
        const seen = [];
        s.addEventListener("event", (e) => seen.push(e.detail.v));
        """,
        """
        ws.deliver({ v: 5, inc: "a1", view: { room: {} } });
        ws.deliver({ v: 6, event: { type: "chat" } });
        const before = window.sent.length;
        ws.deliver({ v: 8, event: { type: "chat" } });   // 7 went missing
        const asked = window.sent.slice(before);
        // After a lost connection the client resumes from the last version.
        const hello = window.sent[0];
        ws.onclose({ code: 1006 });
        // the first try again comes after a jittered backoff (static/js/net.js)
        for (let i = 0; i < 50 && !window.sockets[1]; i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        const again = window.sockets[1];
        again.open();
        return { seen, asked, hello, resumed: window.sent.at(-1), urls: [ws.url, again.url] };
        """,
    )
    assert out["seen"] == [6]  # the event after the gap is not applied
    assert [m.get("cmd") for m in out["asked"]] == [{"type": "resync"}]
    # the token goes in the first message, never in a URL
    assert out["hello"] == {"auth": "tok", "batch": True}
    assert out["resumed"] == {"auth": "tok", "batch": True, "since": 6, "inc": "a1"}
    assert all(u.endswith("/ws/rooms/ABC123") for u in out["urls"]), out["urls"]


def test_a_view_without_its_room_part_keeps_the_last_one(pages: Pages) -> None:
    """With batch=1 the server leaves an unchanged room part out of views; the
    socket hands on whole views, and asks for one if it never had the room."""
    out = run_socket(
        pages,
        """
        const views = [];
        s.addEventListener("view", (e) => views.push(e.detail.view));
        """,
        """
        ws.deliver({ v: 1, view: { room: { status: "playing" }, game: { n: 1 } } });
        ws.deliver({ v: 2, view: { game: { n: 2 } } });
        ws.deliver({ v: 3, view: { room: { status: "finished" }, game: { n: 3 } } });
        ws.deliver({ v: 4, view: { game: { n: 4 } } });
        // A new connection must bring the room part again before it is left out.
        ws.onclose({ code: 1006 });
        // the first try again comes after a jittered backoff (static/js/net.js)
        for (let i = 0; i < 50 && !window.sockets[1]; i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        ws = window.sockets[1];
        ws.open();
        const before = window.sent.length;
        ws.deliver({ v: 5, view: { game: { n: 5 } } });
        return { views, asked: window.sent.slice(before), v: s.v };
        """,
    )
    assert [(v["room"]["status"], v["game"]["n"]) for v in out["views"]] == [
        ("playing", 1),
        ("playing", 2),
        ("finished", 3),
        ("finished", 4),
    ]
    assert [m.get("cmd") for m in out["asked"]] == [{"type": "resync"}]
    assert out["v"] == 4  # the roomless view on the new socket was not applied


def test_refused_seat_stops_reconnecting_and_offline_drops_the_socket(pages: Pages) -> None:
    page = pages.open("/")
    page.evaluate(FAKE_SOCKET)
    out = run(
        page,
        """
        const { RoomSocket } = await import("/js/net.js");
        const a = new RoomSocket("ABC123", "bad");
        const why = [];
        a.addEventListener("refused", (e) => why.push(e.detail.code));
        a.connect();
        window.sockets[0].open();
        window.sockets[0].onclose({ code: 4401, reason: "bad token" });
        await new Promise((r) => setTimeout(r, 500));
        const afterRefusal = window.sockets.length;

        const b = new RoomSocket("ABC123", "tok");
        const states = [];
        b.addEventListener("status", (e) => states.push(e.detail.status));
        b.connect();
        window.sockets[1].open();
        window.dispatchEvent(new Event("offline"));
        return { why, afterRefusal, states, dropped: window.sockets[1].readyState };
        """,
    )
    assert out["why"] == [4401]
    assert out["afterRefusal"] == 1  # no retry with a refused token
    assert out["states"][-1] in ("offline", "reconnecting")
    assert out["dropped"] == 3


def test_posso_runs_are_laid_out_low_to_high(pages: Pages) -> None:
    page = pages.open("/")
    out = run(
        page,
        """
        const { arrangeRun, arrangeOnRun } = await import("/js/tables/posso.js");
        return {
          gap: arrangeRun(["7H", "5H", "2C", "8H"]),
          spareHigh: arrangeRun(["9S", "10S", "JS", "JK"]),
          spareLowAtAce: arrangeRun(["QD", "KD", "AD", "2S"]),
          spareLow: arrangeRun(["9S", "10S", "JS", "JK"], "low"),
          onHigh: arrangeOnRun({ low: "5", high: "8" }, ["JH", "2D", "9H"], "high"),
          onLow: arrangeOnRun({ low: "6", high: "9" }, ["3C", "JK"], "low"),
        };
        """,
    )
    assert out["gap"] == ["5H", "2C", "7H", "8H"]
    assert out["spareHigh"] == ["9S", "10S", "JS", "JK"]
    assert out["spareLowAtAce"] == ["2S", "QD", "KD", "AD"]
    assert out["spareLow"] == ["JK", "9S", "10S", "JS"]
    assert out["onHigh"] == ["9H", "2D", "JH"]
    assert out["onLow"] == ["3C", "JK"]


def test_cards_have_names_and_sort_in_each_games_order(pages: Pages) -> None:
    page = pages.open("/")
    out = run(
        page,
        """
        const c = await import("/js/cards.js");
        const hand = ["2C", "KD", "3S", "AH", "JK", "10H", "3C"];
        return {
          names: ["10H", "QS", "AD", "JK"].map(c.cardName),
          bigtwo: c.sortCards(["2C", "KD", "3S", "AH", "3C", "10H"], "rank", "bigtwo"),
          posso: c.sortCards(hand, "rank", "posso"),
          suit: c.sortCards(["KD", "3S", "AH", "3C"], "suit"),
          label: c.cardEl("10H", { onclick() {} }).getAttribute("aria-label"),
          tag: c.cardEl("10H", { onclick() {} }).tagName,
        };
        """,
    )
    assert out["names"] == ["10 of hearts", "queen of spades", "ace of diamonds", "joker"]
    assert out["bigtwo"] == ["3C", "3S", "10H", "KD", "AH", "2C"]
    assert out["posso"] == ["3C", "3S", "10H", "KD", "AH", "2C", "JK"]  # wilds last
    assert out["suit"] == ["3C", "KD", "3S", "AH"]
    assert out["label"] == "10 of hearts"
    assert out["tag"] == "BUTTON"


def test_a_batched_frame_is_handled_message_by_message(pages: Pages) -> None:
    out = run_socket(
        pages,
        """
        const order = [];
        s.addEventListener("event", (e) => order.push("event " + e.detail.v));
        s.addEventListener("view", (e) => order.push("view " + e.detail.v));
        """,
        """
        ws.deliver({ v: 3, view: { room: {} } });
        ws.deliver([{ v: 4, event: { type: "chat" } }, { v: 4, view: { room: {} } }]);
        return { order, hello: window.sent[0], sent: window.sent.length };
        """,
    )
    assert out["hello"]["batch"] is True
    assert out["order"] == ["view 3", "event 4", "view 4"]
    assert out["sent"] == 1  # the hello only: no gap was seen, so no resync was asked for
