"""Reading one client frame into (id, kind, payload), refusing anything else
with a message that says exactly what was wrong."""

from __future__ import annotations

from typing import Any

import orjson

from app.rooms.errors import RoomError

MessageId = int | str | None
_KEYS = frozenset({"id", "action", "cmd"})
ID_MAX = 64


class EnvelopeError(RoomError):
    """A refusal that still knows the message's id, when it got that far."""

    def __init__(self, code: str, message: str, msg_id: MessageId = None) -> None:
        super().__init__(code, message)
        self.msg_id = msg_id


def frame_too_large(data: str | bytes, limit: int) -> bool:
    if isinstance(data, bytes):
        return len(data) > limit
    # a character is at most 4 bytes: only long strings need encoding to measure
    return len(data) > limit or (len(data) * 4 > limit and len(data.encode()) > limit)


def parse_message(data: str | bytes) -> tuple[MessageId, str, dict[str, Any]]:
    """`("action", {...})` or `("cmd", {"type": ...})`, with the client's id."""
    try:
        msg = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise EnvelopeError("bad_json", "the message is not valid JSON") from None
    if not isinstance(msg, dict):
        raise EnvelopeError("bad_message", "a message must be a JSON object")
    msg_id = msg.get("id")
    if type(msg_id) is int and -(2**53) <= msg_id <= 2**53:
        pass  # the usual id: a counter
    elif msg_id is not None and (
        isinstance(msg_id, bool)
        or not isinstance(msg_id, (int, str))
        or (isinstance(msg_id, str) and len(msg_id) > ID_MAX)
        or (isinstance(msg_id, int) and abs(msg_id) > 2**53)
    ):
        raise EnvelopeError(
            "bad_message", f"id must be an integer or a string of at most {ID_MAX} characters"
        )
    if msg.keys() - _KEYS:
        extra = sorted(k for k in msg if k not in _KEYS)
        raise EnvelopeError(
            "bad_message",
            f"unknown field(s) {', '.join(map(repr, extra[:5]))}: a message has only "
            "'id' and one of 'action' or 'cmd' (your seat comes from your token)",
            msg_id,
        )
    if "action" in msg and "cmd" in msg:
        raise EnvelopeError("bad_message", "send either 'action' or 'cmd', not both", msg_id)
    if "action" in msg:
        kind = "action"
    elif "cmd" in msg:
        kind = "cmd"
    else:
        raise EnvelopeError(
            "unknown_message", "a message needs an 'action' or a 'cmd' object", msg_id
        )
    payload = msg[kind]
    if not isinstance(payload, dict):
        raise EnvelopeError("bad_message", f"'{kind}' must be a JSON object", msg_id)
    if kind == "cmd" and not isinstance(payload.get("type"), str):
        raise EnvelopeError("bad_command", "a command needs a string 'type'", msg_id)
    return msg_id, kind, payload
