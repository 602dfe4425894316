"""Reading client frames: every malformed shape is refused with its own code."""

from __future__ import annotations

import pytest

from app.rooms.envelope import EnvelopeError, frame_too_large, parse_message


def test_actions_and_commands_are_read_with_their_id() -> None:
    assert parse_message('{"id": 3, "action": {"type": "pass"}}') == (3, "action", {"type": "pass"})
    assert parse_message(b'{"id": "a", "cmd": {"type": "chat", "text": "hi"}}') == (
        "a",
        "cmd",
        {"type": "chat", "text": "hi"},
    )
    assert parse_message('{"cmd": {"type": "resync"}}')[0] is None
    # the largest integers JavaScript counts exactly are ids too
    assert parse_message('{"id": 9007199254740992, "cmd": {"type": "x"}}')[0] == 2**53
    assert parse_message('{"id": -9007199254740992, "cmd": {"type": "x"}}')[0] == -(2**53)


@pytest.mark.parametrize(
    ("raw", "code", "msg_id"),
    [
        ("{", "bad_json", None),
        ('"hello"', "bad_message", None),
        ('{"id": true, "cmd": {"type": "x"}}', "bad_message", None),
        ('{"id": 1.5, "cmd": {"type": "x"}}', "bad_message", None),
        ('{"id": 9007199254740993, "cmd": {"type": "x"}}', "bad_message", None),
        ('{"id": -9007199254740993, "cmd": {"type": "x"}}', "bad_message", None),
        ('{"id": "' + "x" * 65 + '", "cmd": {"type": "x"}}', "bad_message", None),
        ('{"id": 1, "seat": 2, "action": {"type": "pass"}}', "bad_message", 1),
        ('{"id": 1, "action": [1]}', "bad_message", 1),
        ('{"id": 1, "action": {}, "cmd": {"type": "chat"}}', "bad_message", 1),
        ('{"id": 1}', "unknown_message", 1),
        ('{"id": 1, "cmd": {"type": 5}}', "bad_command", 1),
    ],
)
def test_malformed_messages_are_refused_by_name(raw: str, code: str, msg_id: object) -> None:
    with pytest.raises(EnvelopeError) as err:
        parse_message(raw)
    assert err.value.code == code and err.value.message
    assert err.value.msg_id == msg_id


def test_frame_size_counts_bytes_not_characters() -> None:
    assert not frame_too_large("x" * 100, 100)
    assert frame_too_large("x" * 101, 100)
    assert frame_too_large("é" * 60, 100)  # 120 bytes
    assert frame_too_large(b"x" * 101, 100)
