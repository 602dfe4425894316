"""Turn alerts in the real browser: the installable app's files, a Web Push
message delivered to the service worker over Chromium's DevTools protocol
(shown as one notification, with no card in it), the page's own alert when
it is hidden in its turn, and over plain HTTP the reason they are off."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.client import cards_in
from tests.browser.conftest import CHROMIUM_ARGS, LAPTOP, Pages, shoot
from tests.browser.play import create_room, wait_until

pytestmark = pytest.mark.browser

NOTIFICATIONS = """async () => {
  const reg = await navigator.serviceWorker.ready;
  return (await reg.getNotifications()).map((n) => ({title: n.title, body: n.body, tag: n.tag}));
}"""


def notifications(page: Any) -> list[dict[str, str]]:
    return list(page.evaluate(NOTIFICATIONS))


def test_the_manifest_and_the_service_worker_are_served_for_installing(server: str) -> None:
    with urllib.request.urlopen(f"{server}/manifest.webmanifest") as r:
        assert r.headers["Content-Type"] == "application/manifest+json"
        manifest = json.load(r)
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    for icon in manifest["icons"]:
        with urllib.request.urlopen(server + icon["src"]) as r:
            png = r.read()
        assert png.startswith(b"\x89PNG") and r.headers["Content-Type"] == "image/png"
        size = int.from_bytes(png[16:20], "big")
        assert icon["sizes"] == f"{size}x{size}"
    with urllib.request.urlopen(f"{server}/sw.js") as r:
        assert r.headers["Content-Type"].startswith("text/javascript")
        assert r.headers["Cache-Control"] == "no-cache"
        assert b'addEventListener("push"' in r.read()


@pytest.fixture
def alerted(pages: Pages) -> Iterator[Any]:
    """A page whose person allowed notifications, with its service worker up."""
    page = pages.open("/", permissions=["notifications"])
    page.wait_for_function("async () => !!(await navigator.serviceWorker.ready).active")
    yield page


def test_a_push_delivered_to_the_service_worker_shows_one_notification(
    alerted: Any, server: str
) -> None:
    page = alerted
    cdp = page.context.new_cdp_session(page)
    registrations: list[dict[str, Any]] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: registrations.extend(e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    for _ in range(200):  # the sync API takes events in while it waits in the page
        if any(r["scopeURL"] == f"{server}/" for r in registrations):
            break
        page.wait_for_timeout(50)
    reg = next(r for r in registrations if r["scopeURL"] == f"{server}/")
    message = {
        "title": "Card room",
        "body": "Your turn in Big Two at Ann's table",
        "url": "/r/ABCDE",
        "tag": "turn:ABCDE",
    }

    def push(data: dict[str, str]) -> None:
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": server, "registrationId": reg["registrationId"], "data": json.dumps(data)},
        )

    push(message)
    wait_until(lambda: len(notifications(page)) == 1, 10, "the notification")
    shown = notifications(page)
    assert shown == [{"title": "Card room", "body": message["body"], "tag": "turn:ABCDE"}]
    assert cards_in(shown) == []
    # the room's next nudge takes the place of the last, never a pile
    push(message)
    time.sleep(0.5)
    assert len(notifications(page)) == 1


#: the page's alert needs a hidden page: headless Chromium never hides one, so
#: the test says when it is hidden (the page reads the standard property)
HIDE = """(hidden) => {
  Object.defineProperty(document, "visibilityState",
    {configurable: true, get: () => hidden ? "hidden" : "visible"});
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def _alerts_on_in_a_new_room(page: Any) -> None:
    create_room(page, "Ann", "bigtwo")
    page.click(".nudges button")
    page.wait_for_selector(".nudges button[aria-pressed=true]")


def _hidden_until_asked(page: Any) -> None:
    """Hide the page, start the game, and wait until Ann is asked to move."""
    page.evaluate(HIDE, True)
    page.click("#start")
    page.wait_for_function("() => document.body.dataset.asked === 'Your turn'", timeout=30_000)


def test_a_hidden_page_alerts_once_in_its_turn_and_clears_when_looked_at(alerted: Any) -> None:
    page = alerted
    _alerts_on_in_a_new_room(page)
    assert "Turn alerts are on" in page.inner_text(".nudges")
    page.locator(".nudges").scroll_into_view_if_needed()
    shoot(page, "nudges-on")
    _hidden_until_asked(page)
    # a loaded machine (the suite runs in two processes) may take a while over
    # the worker and its icon (CI failed once at 10 s, two processes once at
    # 30); what the page says it did is in the message if it never shows
    try:
        wait_until(lambda: len(notifications(page)) == 1, 60, "the page's alert")
    except AssertionError as err:
        told = """async () => [
          document.body.dataset.nudged, document.body.dataset.nudgeStep,
          document.body.dataset.nudgeError, Notification.permission,
          (await navigator.serviceWorker.getRegistration())?.active?.state]"""
        said = page.evaluate(told)
        shown = notifications(page)  # none, or more than one: which, and their tags
        raise AssertionError(
            f"{err}; told, how far, error, permission, worker: {said}; notifications: {shown}"
        ) from None
    assert notifications(page) == [
        {
            "title": "Card room",
            "body": "Your turn in Big Two at your table",
            "tag": f"turn:{code_of(page)}",
        }
    ]
    # more views in the same turn (the page hidden again) alert no more
    page.evaluate(HIDE, False)
    wait_until(lambda: notifications(page) == [], 10, "cleared when looked at")
    page.evaluate(HIDE, True)
    time.sleep(0.5)
    assert notifications(page) == [] and page.evaluate("() => document.body.dataset.nudged") == "1"


#: the worker refuses to show anything; the page's own notifications are counted
REFUSE = """() => {
  ServiceWorkerRegistration.prototype.showNotification =
    () => Promise.reject(new Error("refused here"));
  const Real = window.Notification;
  window.shown = [];
  window.Notification = function (title, options) {
    window.shown.push(options.body);
    return new Real(title, options);
  };
  window.Notification.permission = Real.permission;
  window.Notification.requestPermission = Real.requestPermission.bind(Real);
}"""


def test_a_refused_worker_notification_is_shown_by_the_page_and_says_why(alerted: Any) -> None:
    page = alerted
    _alerts_on_in_a_new_room(page)
    page.evaluate(REFUSE)
    _hidden_until_asked(page)
    wait_until(lambda: page.evaluate("() => window.shown.length") == 1, 30, "the page's own")
    assert page.evaluate("() => window.shown") == ["Your turn in Big Two at your table"]
    assert page.evaluate("() => document.body.dataset.nudgeError") == "refused here"
    assert notifications(page) == []  # nothing through the worker


def code_of(page: Any) -> str:
    return str(page.evaluate("() => location.pathname.split('/').pop().toUpperCase()"))


def test_over_plain_http_the_page_says_why_alerts_are_off(
    browser: Any, server: str, chromium_path: str
) -> None:
    """Reached by a name that is not this computer, over http, the page is
    not a secure context: no notifications, and it says so."""
    port = server.rsplit(":", 1)[1]
    other = browser.browser_type.launch(
        executable_path=chromium_path,
        args=[
            *CHROMIUM_ARGS,
            "--host-resolver-rules=MAP cardroom.test 127.0.0.1",
            "--disable-features=HttpsUpgrades",
        ],
    )
    try:
        page = other.new_context(viewport=LAPTOP).new_page()
        page.goto(f"http://cardroom.test:{port}/")
        assert page.evaluate("() => window.isSecureContext") is False
        create_room(page, "Ann", "bigtwo")
        why = page.inner_text(".nudges-off")
        page.locator(".nudges").scroll_into_view_if_needed()
        shoot(page, "nudges-off-plain-http")
        assert "secure address" in why and f"http://cardroom.test:{port}" in why
        assert page.locator(".nudges button").count() == 0
        assert page.inner_text(".nudges").strip().endswith("given a DOMAIN).")
        assert page.evaluate("() => 'serviceWorker' in navigator") is False
    finally:
        other.close()
