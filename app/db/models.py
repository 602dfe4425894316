"""The durable tables.  migrations/versions holds the same schema as hand-written
Alembic steps; a test checks that the two never drift apart.

Choices that are not obvious:

- Rooms have their own integer id.  A short room code is unique only among open
  rooms (a partial unique index), so a code can come back later without the new
  room inheriting the old one's players or games.
- A player who leaves keeps their row (`present` false): the games they played
  still need their name and the browser or account that played them.
- Seeds are stored as decimal text: the engines accept any Python int, and a
  63-bit column would one day refuse a seed some room picked.
- JSON columns use plain JSON (text), not JSONB, so the engine's rows and
  actions come back with their keys in the order they were written.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

#: Named constraints keep SQLite and PostgreSQL schemas comparable and let later
#: migrations drop a constraint by name on both.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class Account(Base):
    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    #: casefolded name: "Ana" and "ana" are the same account
    name_key: Mapped[str] = mapped_column(String(32), unique=True)
    password_hash: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LoginSession(Base):
    """A signed-in browser.  Only the SHA-256 of the cookie value is kept, so a
    copy of the database cannot be used to sign in as anyone."""

    __tablename__ = "login_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    #: the browser (guest cookie) that signed in: seats it takes from now on
    #: belong to the account even if the room does not say so
    guest_id: Mapped[str | None] = mapped_column(String(128), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class GuestAlias(Base):
    """A guest cookie that stands for another guest identity, or for none.

    A person who moves to another device with their own move link takes
    their guest identity along: the new browser gets a fresh cookie whose
    hash (`key`) names the person's guest id, and every other cookie of that
    person - the old device's - gets a row with `guest_id` null: revoked, so
    it is a stranger's browser from then on (app/db/accounts.py, `move_guest`).
    A cookie without a row is its own guest id, as before this table."""

    __tablename__ = "guest_aliases"

    #: SHA-256 of a guest cookie (app/api/identity.py, `guest_key`)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: the guest id the cookie acts as; null: revoked
    guest_id: Mapped[str | None] = mapped_column(String(128), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Room(Base):
    __tablename__ = "rooms"
    __table_args__ = (
        Index(
            "uq_rooms_open_code",
            "code",
            unique=True,
            sqlite_where=text("NOT closed"),
            postgresql_where=text("NOT closed"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(32))
    game: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]]
    settings: Mapped[dict[str, Any]]
    host_player_id: Mapped[str | None] = mapped_column(String(64))
    tally: Mapped[dict[str, Any]]
    closed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: the epoch of the room's current owner process (several processes): an
    #: append carrying an older epoch is refused (app/store/cluster.py)
    epoch: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    #: seat tokens links replaced, by the token's hash: {name, by, own, at},
    #: so an old device is told what happened after a restart too (null:
    #: none, or written by a release before 0008)
    replaced: Mapped[dict[str, Any] | None]
    #: people the host removed, by player id: {name, guest_id, account_id,
    #: at}, turned away when they come back (null: nobody, or a release
    #: before 0012)
    removed: Mapped[dict[str, Any] | None]


class Player(Base):
    """One occupant of a room, seated, a bot, or a spectator (seat null)."""

    __tablename__ = "players"
    __table_args__ = (Index("uq_players_room_id_player_id", "room_id", "player_id", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    room_id: Mapped[int] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    player_id: Mapped[str] = mapped_column(String(64))
    #: order in the room's list (join order), kept so recovery rebuilds it as it was
    position: Mapped[int] = mapped_column(Integer, default=0)
    name: Mapped[str] = mapped_column(Text)
    seat: Mapped[int | None] = mapped_column(Integer)
    token_hash: Mapped[str] = mapped_column(String(64), default="")
    is_bot: Mapped[bool] = mapped_column(Boolean, default=False)
    guest_id: Mapped[str | None] = mapped_column(String(128), index=True)
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL"), index=True
    )
    present: Mapped[bool] = mapped_column(Boolean, default=True)
    #: a bot's level as the host chose it (null: a person, or normal)
    bot_level: Mapped[str | None] = mapped_column(String(16))
    #: the place is held on a device through someone else's seat link (null:
    #: not, or a release before 0012): the person's own identity may not
    #: follow its cards in a running game
    lent: Mapped[bool | None] = mapped_column(Boolean)


class GameRow(Base):
    __tablename__ = "games"
    __table_args__ = (Index("uq_games_public_id", "public_id", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    room_id: Mapped[int] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"), index=True)
    game: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]]
    seed: Mapped[str] = mapped_column(Text)
    #: player_id per seat, as the room gave it
    seats: Mapped[list[Any]]
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    result: Mapped[dict[str, Any] | None]
    #: the id every page and route shows (app/store/records.py, `new_game_ref`):
    #: random, so it counts nothing, where `id` counts every game ever played.
    #: Null only for a game the release before 0013 started during a rolling
    #: upgrade; that one is shown by `id` (app/db/history.py, `public_ref`)
    public_id: Mapped[str | None] = mapped_column(String(32))


class GameSeat(Base):
    """Who sat where in one game: the link "my past games" is found through."""

    __tablename__ = "game_seats"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_ref: Mapped[int] = mapped_column(
        ForeignKey("players.id", ondelete="CASCADE"), index=True
    )
    #: the name as it was when the game started (players may rename later);
    #: null for a player the room had not saved yet, whose own name then stands
    name: Mapped[str | None] = mapped_column(Text)


class ActionRow(Base):
    """The action log.  The primary key (game_id, seq) is the "unique per game
    and sequence" rule; appends check that seq - 1 exists, so the log has no gaps."""

    __tablename__ = "actions"
    #: clustered on its key on SQLite: one B-tree per append (migration 0014)
    __table_args__ = ({"sqlite_with_rowid": False},)

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int | None] = mapped_column(Integer)
    action: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: the owner epoch of the process that wrote it (null: written before
    #: actions were tagged): a checker can tell who wrote what
    epoch: Mapped[int | None] = mapped_column(Integer)


class ScoreHand(Base):
    """One hand of a Posso score sheet: what is common to the table, plus the
    engine's row exactly as it gave it (`row`)."""

    __tablename__ = "score_hands"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    hand: Mapped[int] = mapped_column(Integer, primary_key=True)
    dealer: Mapped[int | None] = mapped_column(Integer)
    requirement: Mapped[Any | None] = mapped_column(JSON)
    went_out: Mapped[int | None] = mapped_column(Integer)
    cut: Mapped[Any | None] = mapped_column(JSON)
    row: Mapped[dict[str, Any]]


class ScoreLine(Base):
    """One player's line in one hand of a Posso score sheet."""

    __tablename__ = "score_lines"
    __table_args__ = (
        ForeignKeyConstraint(
            ["game_id", "hand"],
            ["score_hands.game_id", "score_hands.hand"],
            ondelete="CASCADE",
            name="fk_score_lines_game_id_hand_score_hands",
        ),
    )

    game_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hand: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    points: Mapped[int | None] = mapped_column(Integer)
    total: Mapped[int | None] = mapped_column(Integer)
    went_out: Mapped[bool] = mapped_column(Boolean, default=False)
    posso_count: Mapped[int | None] = mapped_column(Integer)
    cut: Mapped[Any | None] = mapped_column(JSON)


class Snapshot(Base):
    """A game's engine state after `seq` actions, so a room is rebuilt from it
    and the actions after it instead of from the whole log.  `engine` names the
    engine's code it was made by (app/rooms/snapshots.py); a snapshot made by
    other code is never loaded (the room replays the log instead).  Only the
    latest is kept per game."""

    __tablename__ = "snapshots"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer)
    engine: Mapped[str] = mapped_column(String(64))
    state: Mapped[bytes] = mapped_column(LargeBinary)


class SeatResult(Base):
    """One seat of one finished game, as the records pages count it: a summary kept up
    when the game finishes (app/db/summaries.py; app/db/standings.py reads it),
    so that a person's records, a head-to-head and a room's evening read a few
    index pages instead of every game's result and score sheet.

    `person` is the public person id (`a12` for an account, `g` and a hash for
    a guest; null for a bot), moved to the account when a guest signs up.
    The table is clustered on its key on SQLite (WITHOUT ROWID), so the seats
    of one game are read together; the covering index on `person` answers the
    per-person sums without reading the table.
    """

    __tablename__ = "seat_results"
    __table_args__ = (
        Index(
            "ix_seat_results_person",
            "person",
            "game_id",
            "game",
            "place",
            "score",
            "hands_won",
            "possos",
            "room_id",
            "player_id",
        ),
        Index("ix_seat_results_room_id", "room_id", "game"),
        {"sqlite_with_rowid": False},
    )

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    person: Mapped[str | None] = mapped_column(String(64))
    #: the room's own id for the seat (its tally is kept under it)
    player_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(Text)
    game: Mapped[str] = mapped_column(String(32))
    room_id: Mapped[int] = mapped_column(Integer)
    finished_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: 1 = first; seats tied in the result share a place
    place: Mapped[int] = mapped_column(Integer)
    #: the result's score for the seat (Posso: the final total, lower is better)
    score: Mapped[int | None] = mapped_column(Integer)
    #: Posso only: hands the seat went out in, and Possos it took
    hands_won: Mapped[int | None] = mapped_column(Integer)
    possos: Mapped[int | None] = mapped_column(Integer)


class PersonTotal(Base):
    """A person's finished games of one kind at one place, summed: kept up
    with `seat_results` (app/db/summaries.py), so a person's records read a
    handful of rows however many games they played."""

    __tablename__ = "person_totals"
    __table_args__ = ({"sqlite_with_rowid": False},)

    person: Mapped[str] = mapped_column(String(64), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    place: Mapped[int] = mapped_column(Integer, primary_key=True)
    games: Mapped[int] = mapped_column(Integer)
    #: over the games with a score: how many, their sum, the best (lowest)
    scored: Mapped[int] = mapped_column(Integer)
    score_sum: Mapped[int] = mapped_column(BigInteger)
    best: Mapped[int | None] = mapped_column(Integer)
    hands_won: Mapped[int] = mapped_column(Integer)
    possos: Mapped[int] = mapped_column(Integer)


class PersonPair(Base):
    """Two people's finished games of one kind together, from `person`'s side
    (each pair is kept both ways): a head-to-head, a rival, or "may this
    person see that one's records" is one index lookup."""

    __tablename__ = "person_pairs"
    __table_args__ = ({"sqlite_with_rowid": False},)

    person: Mapped[str] = mapped_column(String(64), primary_key=True)
    other: Mapped[str] = mapped_column(String(64), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    together: Mapped[int] = mapped_column(Integer)
    #: games `person` placed above / below `other`
    higher: Mapped[int] = mapped_column(Integer)
    lower: Mapped[int] = mapped_column(Integer)
    #: the two sides' Posso sums over these games: scored, sum, best, hands won, Possos
    scored: Mapped[int] = mapped_column(Integer)
    score_sum: Mapped[int] = mapped_column(BigInteger)
    best: Mapped[int | None] = mapped_column(Integer)
    hands_won: Mapped[int] = mapped_column(Integer)
    possos: Mapped[int] = mapped_column(Integer)
    other_scored: Mapped[int] = mapped_column(Integer)
    other_score_sum: Mapped[int] = mapped_column(BigInteger)
    other_best: Mapped[int | None] = mapped_column(Integer)
    other_hands_won: Mapped[int] = mapped_column(Integer)
    other_possos: Mapped[int] = mapped_column(Integer)


class SeriesPoints(Base):
    """A room's Big Two series tally, one row per occupant (bots included,
    `person` null): kept up with `seat_results` (app/db/summaries.py), so "how
    many series has this person won" compares a few rows per room instead of
    reading every room's tally."""

    __tablename__ = "series_points"
    __table_args__ = (
        Index("ix_series_points_person", "person", "room_id", "points"),
        #: a room's top score from the index alone (PostgreSQL reads no table rows)
        Index("ix_series_points_room_id", "room_id", "points"),
        {"sqlite_with_rowid": False},
    )

    room_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    person: Mapped[str | None] = mapped_column(String(64))
    points: Mapped[int] = mapped_column(Integer)


class PushKey(Base):
    """The server's VAPID key pair for Web Push (app/db/push.py): one row, made
    by whichever process starts first and read by every other, so all of them
    sign with the key the browsers subscribed with."""

    __tablename__ = "push_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: PEM (PKCS#8) of the P-256 private key
    private_pem: Mapped[str] = mapped_column(Text)
    #: the raw public point, base64url: the browsers' `applicationServerKey`
    public_key: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PushSubscription(Base):
    """A browser's Web Push subscription, tied to the person who made it: the
    browser (guest id, hashed like everywhere) and the account signed in then.
    The endpoint is the push service's address for that browser; one row per
    endpoint, taken over by whoever subscribes it last."""

    __tablename__ = "push_subscriptions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    endpoint: Mapped[str] = mapped_column(String(1024), unique=True)
    p256dh: Mapped[str] = mapped_column(String(128))
    auth: Mapped[str] = mapped_column(String(64))
    guest_id: Mapped[str] = mapped_column(String(128), index=True)
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
