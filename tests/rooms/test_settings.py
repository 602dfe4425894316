"""Room settings and typed text: strict, bounded, and plain text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.games import GAMES
from app.rooms.errors import RoomError
from app.rooms.settings import RoomSettings, parse_settings
from app.rooms.text import clean_chat, clean_name
from tests.rooms.harness import new_room, seat_people, settle


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


def _form_titles() -> dict[str, str]:
    """The labels the settings and house-rules forms show (static/js/options.js TITLES)."""
    source = (Path(__file__).parents[2] / "static" / "js" / "options.js").read_text()
    block = source[
        source.index("const TITLES = {") : source.index("};", source.index("const TITLES"))
    ]
    return dict(re.findall(r'^\s+(\w+): "([^"]+)",', block, flags=re.M))


@pytest.mark.parametrize(
    "key", [k for k, f in RoomSettings.model_fields.items() if f.annotation is not bool]
)
def test_a_refused_setting_is_named_as_the_form_labels_it(key: str) -> None:
    titles = _form_titles()
    assert key in titles, f"the form has no label for {key}"
    with pytest.raises(RoomError) as err:
        parse_settings({key: 100_000})
    assert titles[key] in err.value.message, err.value.message
    # never the field's name in the code ("Bot delay: ...")
    assert key.replace("_", " ").capitalize() + ":" not in err.value.message


def test_a_refused_house_rule_is_named_as_the_form_labels_it() -> None:
    titles = _form_titles()
    with pytest.raises(ValueError, match=titles["start_hand"]):
        GAMES["posso"].parse_options({"start_hand": 11})


async def test_a_first_dealer_nobody_sits_in_is_refused_when_saved() -> None:
    room = new_room(GAMES["posso"])
    ann, _ = await seat_people(room, 2)
    before = dict(room.record.options)
    await room.handle(ann, 1, "cmd", {"type": "set_game", "options": {"first_dealer": 8}})
    await settle()
    (reply,) = [m for m in ann.sock.sent if m.get("re") == 1]
    assert reply["error"]["code"] == "bad_options"
    assert "seat 9 is empty" in reply["error"]["message"] and "1 to 2" in reply["error"]["message"]
    assert room.record.options == before
    await room.handle(ann, 2, "cmd", {"type": "set_game", "options": {"first_dealer": 1}})
    await settle()
    assert room.record.options["first_dealer"] == 1
    await room.shutdown()
