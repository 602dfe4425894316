"""Room settings: the host's knobs for time and bots, validated strictly so a typo
is refused rather than silently ignored."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.games.base import describe_validation_error
from app.rooms.errors import RoomError

#: the fastest a bot moves: the least "Bot thinking time" the settings allow.
#: Bots move at it, whatever the room's setting, while every seat of the game
#: is a bot's and at least one is a person's on "play my turns this hand"
#: (app/rooms/bot_driver.py, `BotDriver.pace`): nobody left plays their own
#: turns, so nobody is kept waiting for the hand to end.
FASTEST_BOT_DELAY = 0.0


class RoomSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: seconds the Posso window stays open
    posso_window: float = Field(default=8.0, ge=0, le=15)
    #: seconds the next player has to answer a Posso call (timing out allows it)
    posso_answer: float = Field(default=15.0, ge=0, le=60)
    #: seconds the dealer has to cut (timing out is a miss)
    cut: float = Field(default=15.0, ge=0, le=120)
    #: None = no turn timer; else seconds before a bot plays the turn
    turn_timer: float | None = Field(default=None, ge=5, le=600)
    #: seconds a player may be gone before a bot takes their seat (see `auto_bot`),
    #: anyone seated may hand it to one, and a host passes the host role on
    disconnect_grace: float = Field(default=60.0, ge=0, le=3600)
    #: a bot plays a seat whose player has been gone past the grace, until they
    #: come back (false: the seat waits until someone hands it to a bot)
    auto_bot: bool = True
    #: seconds a bot "thinks" (randomised 0.5x..1.5x)
    bot_delay: float = Field(default=0.8, ge=FASTEST_BOT_DELAY, le=10)
    #: finished games of this room may be replayed by anyone
    public_replays: bool = False
    #: nobody new may join (people already in the room, and people coming back
    #: on their own browser or account, still get in)
    locked: bool = False

    def timer_seconds(self, kind: str) -> float:
        """How long the engine's named timer runs; unknown kinds get a safe default."""
        if kind in _NO_WAIT:
            return 0.0
        value = getattr(self, kind, None) if kind in _GAME_TIMERS else None
        return float(value) if isinstance(value, (int, float)) else 10.0


#: seconds an away host keeps the role between games: the others are waiting to
#: start, so the role passes sooner than a seat in play (never later than the grace)
LOBBY_HOST_GRACE = 10.0


_GAME_TIMERS = frozenset({"posso_window", "posso_answer", "cut"})
#: waits for a decision that can change nothing (Posso's cut when a hit would
#: leave the dealer's total as it is): the timeout is applied at once, and
#: logged like any other, rather than holding the table up
_NO_WAIT = frozenset({"cut_moot"})


#: each setting as the room settings form labels it (static/js/options.js), so
#: a refusal names the field the host sees ("Bot thinking time", not "Bot delay")
LABELS = {
    "posso_window": "Posso window (seconds)",
    "posso_answer": "Posso answer (seconds)",
    "cut": "Cut timer (seconds)",
    "turn_timer": "Turn timer (seconds)",
    "disconnect_grace": "Grace when disconnected (seconds)",
    "auto_bot": "Auto Bot",
    "bot_delay": "Bot thinking time (seconds)",
    "public_replays": "Public replays",
}


def parse_settings(raw: Any, base: RoomSettings | None = None) -> RoomSettings:
    """Validate settings (a partial update over `base` when given)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise RoomError("bad_settings", "settings must be a JSON object")
    merged = {**(base.model_dump() if base else {}), **raw}
    try:
        return RoomSettings.model_validate(merged)
    except ValidationError as err:
        problems = describe_validation_error(err, LABELS)
        raise RoomError("bad_settings", f"room settings: {problems}") from None
