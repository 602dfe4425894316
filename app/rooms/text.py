"""Cleaning what people type: names and chat are plain text, bounded in length,
without control characters (which can reorder or hide text in a browser)."""

from __future__ import annotations

import unicodedata

from app.rooms.errors import RoomError

NAME_MAX = 24
CHAT_MAX = 500


#: joiners that emoji sequences need; other format characters (bidi overrides,
#: zero-width spaces) can disguise text and are refused
_JOINERS = frozenset({"\u200c", "\u200d"})


def _has_controls(text: str, *, allow_newline: bool) -> bool:
    for ch in text:
        if ch == "\n" and allow_newline:
            continue
        if ch in _JOINERS:
            continue
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co"):
            return True
    return False


def clean_name(raw: object) -> str:
    if not isinstance(raw, str):
        raise RoomError("bad_name", "name must be text")
    name = " ".join(raw.split())
    if not name:
        raise RoomError("bad_name", "name must not be empty")
    if len(name) > NAME_MAX:
        raise RoomError("bad_name", f"name must be at most {NAME_MAX} characters")
    if _has_controls(name, allow_newline=False):
        raise RoomError("bad_name", "name must not contain control or invisible characters")
    return name


def clean_chat(raw: object) -> str:
    if not isinstance(raw, str):
        raise RoomError("bad_command", "chat text must be a string")
    text = raw.strip()
    if not text:
        raise RoomError("bad_command", "chat text must not be empty")
    if len(text) > CHAT_MAX:
        raise RoomError("bad_command", f"chat text must be at most {CHAT_MAX} characters")
    if _has_controls(text, allow_newline=True):
        raise RoomError("bad_command", "chat text must not contain control or invisible characters")
    return text
