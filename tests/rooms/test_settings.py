"""Room settings and typed text: strict, bounded, and plain text."""

from __future__ import annotations

import pytest

from app.rooms.errors import RoomError
from app.rooms.settings import RoomSettings, parse_settings
from app.rooms.text import clean_chat, clean_name


def test_defaults_and_partial_updates() -> None:
    s = parse_settings(None)
    assert (s.posso_window, s.posso_answer, s.cut, s.turn_timer) == (8, 15, 15, None)
    assert (s.disconnect_grace, s.bot_delay, s.public_replays) == (60, 0.8, False)
    t = parse_settings({"cut": 30}, s)
    assert t.cut == 30 and t.posso_window == 8
    assert t.timer_seconds("cut") == 30 and t.timer_seconds("posso_window") == 8


@pytest.mark.parametrize(
    "bad",
    [{"posso_window": 16}, {"posso_window": -1}, {"turn_timer": 1}, {"typo": 1}, [], "x"],
)
def test_bad_settings_are_refused(bad: object) -> None:
    with pytest.raises(RoomError) as err:
        parse_settings(bad)
    assert err.value.code == "bad_settings"


def test_an_unknown_timer_kind_gets_a_default_not_an_attribute() -> None:
    assert RoomSettings().timer_seconds("public_replays") == 10.0


def test_names_and_chat_are_trimmed_bounded_and_free_of_controls() -> None:
    assert clean_name("  Ann   Lee ") == "Ann Lee"
    assert clean_name("<b>Ann</b>") == "<b>Ann</b>"  # text, never markup
    assert clean_chat("line one\nline two") == "line one\nline two"
    assert clean_chat("👨\u200d👩\u200d👧") == "👨\u200d👩\u200d👧"  # emoji joiners are fine
    for bad in ("", "   ", "x" * 25, "a\u202eb", "a\x07b", 5):
        with pytest.raises(RoomError):
            clean_name(bad)
    for bad in ("", "x" * 501, "a\u200bb", None):
        with pytest.raises(RoomError):
            clean_chat(bad)
