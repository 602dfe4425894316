"""Settings from the environment (and .env): one place, read once."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal, Self
from urllib.parse import urlsplit

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: the largest frame the server itself (uvicorn's `--ws-max-size`, set in the
#: Makefile, the Dockerfile and tests/services.py) lets through to the app.
#: Four times the app's default `max_frame_bytes`: a frame somewhat too big is
#: answered with `too_large` and counts as a flood strike; a larger one makes the
#: server close the socket (1009) before reading it whole.
WS_MAX_SIZE = 65_536


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    data_dir: Path = Path("data")
    #: the address friends reach the card room at, e.g. http://192.168.1.20:8000
    #: or https://cards.example.org: invite links are built on it. Empty: the
    #: address the host's own browser used (fine when everyone uses the same).
    public_url: str = Field(default="", pattern=r"^(https?://[^\s/?#]+(/[^\s?#]*)?)?$")
    #: SQLite under data_dir unless set, e.g. postgresql+asyncpg://user@host/db
    database_url: str = ""
    #: Redis for several processes; empty = everything in this process
    redis_url: str = ""
    #: seconds a room's owner process holds its lease without renewing it: a
    #: process that dies is replaced within this plus a second or two (and the
    #: sockets it held stop counting toward the caps below within this)
    lease_seconds: float = Field(default=3.0, ge=0.5, le=60)
    #: a browser's cookies are sent only over HTTPS when true
    secure_cookies: bool = False
    #: largest WebSocket frame accepted from a client, in bytes
    max_frame_bytes: int = Field(default=16_384, ge=1024)
    #: client messages per second allowed per socket before it is told to slow down
    max_messages_per_second: float = Field(default=20.0, gt=0)
    #: worker processes in which strong bots think (at a lower priority than
    #: the server), and how many searches may wait or run at once: past that a
    #: strong bot plays its heuristic move at once (app/bots/thinking.py)
    bot_workers: int = Field(default=1, ge=1, le=64)
    bot_queue: int = Field(default=4, ge=1, le=1024)
    #: a room nobody has been connected to for this many seconds is closed
    idle_room_close_after: float = Field(default=3 * 24 * 3600.0, gt=0)
    #: after a restart, rebuild the open rooms in the background (each is also
    #: rebuilt on first use; bench/recovery.py turns this off to time that)
    rebuild_in_background: bool = True
    #: deal every game from a generator seeded with this, so that a test or a
    #: benchmark can repeat a run exactly; unset, seeds come from `secrets`
    deal_seed: int | None = None
    #: with deal_seed: deal the same this-many games over and over (bench/guard.py
    #: gives each of its windows the same games, so they differ only by the machine)
    deal_cycle: int | None = Field(default=None, gt=0)
    #: seconds a new socket has to send its `{"auth": token}` message
    auth_timeout: float = Field(default=10.0, gt=0)

    # Limits on every door (docs/security.md); per client address (and open
    # sockets also per seat), shared by every process through Redis when
    # redis_url is set.
    #: rooms one address may open per hour
    rooms_per_hour: int = Field(default=60, ge=1)
    #: joins one address may ask for per minute
    joins_per_minute: int = Field(default=30, ge=1)
    #: sign-ins and sign-ups one address may try per minute (each runs argon2)
    signins_per_minute: int = Field(default=10, ge=1)
    #: room lookups (every route with a room code, and opening a socket) one
    #: address may make per minute
    lookups_per_minute: int = Field(default=120, ge=1)
    #: replay pages one address may ask for (each one rebuilds up to MAX_STEPS views)
    replays_per_minute: int = Field(default=30, ge=1)
    #: sockets one seat token may hold open at once (tabs)
    max_sockets_per_seat: int = Field(default=8, ge=1)
    #: sockets one address may hold open at once (a household, an office)
    max_sockets_per_address: int = Field(default=64, ge=1)

    #: the browser client to serve; unset: static/ beside the app (app/api/client.py)
    static_dir: Path | None = None

    #: serve /docs and /openapi.json (off in production: the schema maps every door)
    api_docs: bool = False
    # Web Push (app/rooms/webpush.py, docs/architecture.md "Turn nudges")
    #: seconds a seat's turn waits with its person away before the push goes
    #: (a refresh or a tunnel is back within them, and is no news)
    push_after: float = Field(default=5.0, ge=0)
    #: how push services can reach whoever runs the server (VAPID `sub`): a
    #: mailto: or https: address; empty: PUBLIC_URL's https://host (no port
    #: or path) when it is https, else a
    #: mailto: at localhost (some services, Apple's, want a real one)
    push_contact: str = Field(default="", pattern=r"^((mailto:|https://)\S+)?$")
    #: the push services subscriptions may name (host suffixes): the server
    #: POSTs to these addresses, so no other host is taken
    push_services: str = (
        "fcm.googleapis.com,push.services.mozilla.com,notify.windows.com,push.apple.com"
    )
    #: tests only: also take http:// push endpoints (a loopback push service)
    push_plain_http: bool = False

    #: serve Prometheus metrics at /metrics (app/api/metrics.py), to a scraper
    #: that sends `Authorization: Bearer <metrics_token>`; a token is required
    metrics: bool = False
    metrics_token: str = ""

    #: "plain" lines, or "json": one JSON object per line (app/core/logs.py)
    log_format: Literal["plain", "json"] = "plain"

    #: seconds between purges of expired sign-in sessions
    session_purge_every: float = Field(default=3600.0, gt=0)

    #: TEST ONLY, never set in production: room saves skip the owner-epoch
    #: fence, so an owner paused past its lease can overwrite a newer owner's
    #: people.  tests/integration/test_history_checker.py sets it to show the
    #: history checker catches exactly that; read once, in app/main.py.
    test_only_unfenced_room_saves: bool = False

    @model_validator(mode="after")
    def _cycle_needs_a_seed(self) -> Self:
        """A cycle repeats the seeded games: without a seed it would repeat
        nothing, and say nothing of it."""
        if self.deal_cycle is not None and self.deal_seed is None:
            raise ValueError("DEAL_CYCLE repeats the games DEAL_SEED deals: set DEAL_SEED too")
        return self

    def vapid_contact(self) -> str:
        if self.push_contact:
            return self.push_contact
        host = urlsplit(self.public_url).hostname
        if self.public_url.startswith("https://") and host:
            return f"https://{host}"  # the claim takes no port or path
        return "mailto:cardroom@localhost"

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.data_dir / 'cardroom.db'}"


@lru_cache
def get_settings() -> Settings:
    return Settings()
