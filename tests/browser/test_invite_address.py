"""The invite link friends can open: on 127.0.0.1 the lobby warns that the
link opens on this computer only and says how to let friends in; with
PUBLIC_URL set (the server names it in GET /api/health) the link is built on
it and there is no warning."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.conftest import Pages
from tests.browser.play import create_room

pytestmark = pytest.mark.browser


def test_a_link_to_this_computer_is_flagged_with_how_to_let_friends_in(pages: Pages) -> None:
    ann = pages.open("/")
    link = create_room(ann, "Ann", "bigtwo")
    assert link.startswith("http://127.0.0.1:")
    warning = ann.locator(".localwarn").inner_text()
    assert "only opens here" in warning and "HOST=0.0.0.0" in warning and "PUBLIC_URL" in warning


def test_invite_links_use_the_public_url_the_server_names(pages: Pages) -> None:
    ann = pages.open("/")

    def health(route: Any) -> None:
        body = {"status": "ok", "public_url": "https://cards.example.org"}
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    ann.route("**/api/health", health)
    link = create_room(ann, "Ann", "bigtwo")
    ann.wait_for_function(
        "() => document.querySelector('.invite input').value.startsWith('https://cards.example.org/r/')"
    )
    link = ann.input_value(".invite input")
    assert link.removeprefix("https://cards.example.org/r/").isalnum()
    assert ann.locator(".localwarn").count() == 0
