"""The ASGI application."""

from __future__ import annotations

from fastapi import FastAPI

from app.games import GAMES


def create_app() -> FastAPI:
    app = FastAPI(title="Card room", version="0.1.0")

    @app.get("/api/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/games")
    async def games() -> list[dict[str, object]]:
        return [
            {"name": g.name, "title": g.title, "min_seats": g.min_seats, "max_seats": g.max_seats}
            for g in GAMES.values()
        ]

    return app


app = create_app()
