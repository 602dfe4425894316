"""Games played by real rooms over the real routes, for the records tests.

One app over a real database (SQLite or PostgreSQL), one TestClient (one event
loop, so the rooms' timers and bots run); each person is a guest cookie set on
the client before their requests.  A person who joins over HTTP and never
connects is away from the start, and with a grace of 0 a bot stands in for
their seat at once: their games are still theirs, the way a friend's phone
dies mid-evening and the records still count them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi.testclient import TestClient

from app.api.identity import GUEST_COOKIE, guest_key
from app.bots.posso import PossoBot
from app.core.config import Settings
from app.db.people import person_of
from app.db.setup import open_records
from app.main import create_app
from tests.api.client import Sock, connect, play_to_end
from tests.api.conftest import OPEN_DOORS

#: the stand-ins move at once; a seat whose person never connects gets one at once
FAST = {"bot_delay": 0, "disconnect_grace": 0, "posso_window": 15, "posso_answer": 15}


#: a move the host chose from a view that a stand-in bot had already overtaken
RACES = frozenset({"no_posso_window", "not_your_turn", "no_posso_call"})


@dataclass
class Person:
    name: str
    guest: str

    @property
    def id(self) -> str:
        # the server knows a guest by its cookie's hash only (app/api/identity.py)
        person = person_of(guest_key(self.guest), None)
        assert person is not None
        return person


@dataclass
class Evening:
    client: TestClient
    people: dict[str, Person] = field(default_factory=dict)

    def person(self, name: str) -> Person:
        if name not in self.people:
            self.people[name] = Person(name, f"guest-{name.lower()}-" + "x" * 40)
        return self.people[name]

    def as_(self, name: str) -> TestClient:
        """The client, carrying this person's guest cookie from now on."""
        self.client.cookies.set(GUEST_COOKIE, self.person(name).guest)
        return self.client

    def get(self, name: str, path: str, **params: Any) -> Any:
        return self.as_(name).get(path, params=params)

    def open_room(self, game: str, host: str, others: list[str], **options: Any) -> tuple[str, str]:
        """A room made by `host`, joined by `others`; returns (code, host's token)."""
        made = self.as_(host).post(
            "/api/rooms",
            json={"game": game, "name": host, "options": options, "settings": FAST},
        )
        assert made.status_code == 200, made.text
        code = made.json()["code"]
        for name in others:
            joined = self.as_(name).post(f"/api/rooms/{code}/join", json={"name": name})
            assert joined.status_code == 200, joined.text
        return code, made.json()["token"]

    @contextmanager
    def host(self, code: str, token: str) -> Iterator[Sock]:
        with connect(self.client, code, token) as sock:
            sock.recv()
            yield sock


def play_games(
    sock: Sock, games: int, rng: random.Random, *, bots: int = 0
) -> list[dict[str, Any]]:
    """Start (then rematch) `games` games in the host's room and play the host's
    seat to the end of each; returns each game's final view."""
    for _ in range(bots):
        sock.ok(sock.cmd("add_bot"))
    finals = []
    for k in range(games):
        sock.ok(sock.cmd("start" if k == 0 else "rematch"))
        sock.until_view(lambda v: v["room"]["status"] == "playing")
        finals.append(play_to_end(sock, _chooser(sock), rng=rng, tolerate=RACES))
    return finals


def _chooser(sock: Sock) -> Any:
    """Posso is played by the house bot's judgement (random moves take very
    long to finish a hand); other games by random legal moves."""
    bot, rng = PossoBot(), random.Random(5)

    def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        if view["room"]["game"] == "posso":
            return bot.choose(view["game"], legal, view["you"]["seat"], rng)
        return rng.choice(legal)

    return choose


@contextmanager
def evening(db_url: str, seed: int) -> Iterator[Evening]:
    rng = random.Random(seed)
    app = create_app(
        Settings(max_messages_per_second=1000, **OPEN_DOORS),
        open_records(db_url),
        seeds=lambda: rng.getrandbits(62),
    )
    with TestClient(app) as client:
        yield Evening(client)
