"""Plain words for people: options that depend on the seats are checked when
the game starts and refused in plain words, the form numbers seats from 1 as
the table labels them, no validator's wording reaches the page, and a replay
step says what happened ("Bot 3 passed on the Posso")."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.conftest import Pages
from tests.browser.play import create_room

pytestmark = pytest.mark.browser

DEBUG_WORDS = re.compile(r"Input should|_|bad options|\bposso:")


def test_a_first_dealer_past_the_seats_is_refused_at_the_start_in_plain_words(
    pages: Pages,
) -> None:
    ann = pages.open("/")
    # The form counts seats from 1: "Seat 4" is typed as 4 (sent as 3).
    create_room(ann, "Ann", "posso", options={"first_dealer": "4"}, bots=1)
    assert "First dealer: Seat 4" in ann.locator(".optsummary").inner_text()
    ann.wait_for_function("() => document.querySelectorAll('.seat-row .dot.bot').length === 1")
    ann.click("#start")
    toast = ann.locator(".toast.error").first
    toast.wait_for()
    text = toast.inner_text()
    assert "must be one of the 2 seats at this table (1 to 2), not seat 4" in text, text
    assert not DEBUG_WORDS.search(text), text
    assert ann.evaluate("() => document.body.dataset.room") == "lobby"


def test_a_value_out_of_range_is_refused_without_the_validators_words(pages: Pages) -> None:
    ann = pages.open("/")
    create_room(ann, "Ann", "posso")
    # The host changes the house rules in the lobby to a hand past ten.
    ann.click(".hostrules > summary")
    ann.fill(".hostrules #opt-posso-start_hand", "11")
    ann.click(".hostrules button:has-text('Save house rules')")
    ann.wait_for_function("() => document.querySelector('.hostrules .err').textContent.length")
    text = ann.locator(".hostrules .err").first.inner_text()
    assert "Start at hand: must be at most 10" in text, text
    assert not DEBUG_WORDS.search(text), text


def test_replay_steps_are_told_in_plain_words(pages: Pages) -> None:
    page = pages.open("/")
    said: Any = page.evaluate(
        """async () => {
        const { actionText } = await import("/js/history.js");
        return [
          actionText({ type: "pass_posso" }, "Bot 3"),
          actionText({ type: "call_posso" }, "Ann"),
          actionText({ type: "answer_posso", allow: false }, "Bob"),
          actionText({ type: "draw", source: "pile" }, "Bot 2"),
          actionText({ type: "pass" }, null),
        ];
      }"""
    )
    assert said == [
        "Bot 3 passed on the Posso.",
        "Ann called Posso.",
        "Bob denied the Posso and took the card.",
        "Bot 2 took the pile card.",
        "Time ran out: passed.",
    ]
