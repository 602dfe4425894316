"""Refusals the room layer gives, in the same shape as the engines' IllegalAction,
so the socket answers every refusal the same way whoever raised it."""

from __future__ import annotations


class RoomError(Exception):
    """A message or request the room refuses; nothing was changed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def bad_claim() -> RoomError:
    """A seat link that takes nobody's place: unknown, used, expired, or for a
    room that is not open - one answer for all, so a link tells nobody which
    room codes exist."""
    return RoomError("bad_claim", "this seat link is not valid any more: ask for a new one")
