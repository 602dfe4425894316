"""Settings from the environment (and .env): one place, read once."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    data_dir: Path = Path("data")
    #: SQLite under data_dir unless set, e.g. postgresql+asyncpg://user@host/db
    database_url: str = ""
    #: Redis for several processes; empty = everything in this process
    redis_url: str = ""
    #: seconds a room's owner process holds its lease without renewing it: a
    #: process that dies is replaced within this plus a second or two
    lease_seconds: float = Field(default=3.0, ge=0.5, le=60)
    #: a browser's cookies are sent only over HTTPS when true
    secure_cookies: bool = False
    #: largest WebSocket frame accepted from a client, in bytes
    max_frame_bytes: int = Field(default=16_384, ge=1024)
    #: client messages per second allowed per socket before it is told to slow down
    max_messages_per_second: float = Field(default=20.0, gt=0)
    #: a room nobody has been connected to for this many seconds is closed
    idle_room_close_after: float = Field(default=3 * 24 * 3600.0, gt=0)
    #: after a restart, rebuild the open rooms in the background (each is also
    #: rebuilt on first use; bench/recovery.py turns this off to time that)
    rebuild_in_background: bool = True

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.data_dir / 'cardroom.db'}"


@lru_cache
def get_settings() -> Settings:
    return Settings()
