"""Initial schema

Accounts, login sessions, rooms, players, games, seats, the action log, and
Posso score sheets.

Revision: 0001
Parent:   none
Created:  by hand

Reviewed for both databases:
- every constraint and index is named (app.db.models.NAMING), so later steps
  can drop them by name on SQLite and PostgreSQL alike;
- the open-room code index is partial (`WHERE NOT closed`), which both support;
- JSON is plain JSON on both (text on SQLite), keeping key order as written;
- no server defaults: the application writes every value, and a default here
  would be a second source of truth.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("name_key", sa.String(32), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_accounts"),
        sa.UniqueConstraint("name_key", name="uq_accounts_name_key"),
    )
    op.create_table(
        "login_sessions",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("guest_id", sa.String(128), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("token_hash", name="pk_login_sessions"),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_login_sessions_account_id_accounts",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_login_sessions_account_id", "login_sessions", ["account_id"])
    op.create_index("ix_login_sessions_guest_id", "login_sessions", ["guest_id"])

    op.create_table(
        "rooms",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(32), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("host_player_id", sa.String(64), nullable=True),
        sa.Column("tally", sa.JSON(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rooms"),
    )
    op.create_index(
        "uq_rooms_open_code",
        "rooms",
        ["code"],
        unique=True,
        sqlite_where=sa.text("NOT closed"),
        postgresql_where=sa.text("NOT closed"),
    )

    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("room_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("guest_id", sa.String(128), nullable=True),
        sa.Column("account_id", sa.Integer(), nullable=True),
        sa.Column("present", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_players"),
        sa.ForeignKeyConstraint(
            ["room_id"], ["rooms.id"], name="fk_players_room_id_rooms", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_players_account_id_accounts",
            ondelete="SET NULL",
        ),
    )
    op.create_index(
        "uq_players_room_id_player_id", "players", ["room_id", "player_id"], unique=True
    )
    op.create_index("ix_players_guest_id", "players", ["guest_id"])
    op.create_index("ix_players_account_id", "players", ["account_id"])

    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("room_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("seed", sa.Text(), nullable=False),
        sa.Column("seats", sa.JSON(), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("finished_at", TZ, nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
        sa.ForeignKeyConstraint(
            ["room_id"], ["rooms.id"], name="fk_games_room_id_rooms", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_games_room_id", "games", ["room_id"])

    op.create_table(
        "game_seats",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_ref", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("game_id", "seat", name="pk_game_seats"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_game_seats_game_id_games", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["player_ref"],
            ["players.id"],
            name="fk_game_seats_player_ref_players",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_game_seats_player_ref", "game_seats", ["player_ref"])

    op.create_table(
        "actions",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("action", sa.JSON(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_actions"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_actions_game_id_games", ondelete="CASCADE"
        ),
    )

    op.create_table(
        "score_hands",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("hand", sa.Integer(), nullable=False),
        sa.Column("dealer", sa.Integer(), nullable=True),
        sa.Column("requirement", sa.JSON(), nullable=True),
        sa.Column("went_out", sa.Integer(), nullable=True),
        sa.Column("cut", sa.JSON(), nullable=True),
        sa.Column("row", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "hand", name="pk_score_hands"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_score_hands_game_id_games", ondelete="CASCADE"
        ),
    )
    op.create_table(
        "score_lines",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("hand", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=True),
        sa.Column("total", sa.Integer(), nullable=True),
        sa.Column("went_out", sa.Boolean(), nullable=False),
        sa.Column("posso_count", sa.Integer(), nullable=True),
        sa.Column("cut", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("game_id", "hand", "seat", name="pk_score_lines"),
        sa.ForeignKeyConstraint(
            ["game_id", "hand"],
            ["score_hands.game_id", "score_hands.hand"],
            name="fk_score_lines_game_id_hand_score_hands",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("score_lines")
    op.drop_table("score_hands")
    op.drop_table("actions")
    op.drop_index("ix_game_seats_player_ref", table_name="game_seats")
    op.drop_table("game_seats")
    op.drop_index("ix_games_room_id", table_name="games")
    op.drop_table("games")
    op.drop_index("ix_players_account_id", table_name="players")
    op.drop_index("ix_players_guest_id", table_name="players")
    op.drop_index("uq_players_room_id_player_id", table_name="players")
    op.drop_table("players")
    op.drop_index("uq_rooms_open_code", table_name="rooms")
    op.drop_table("rooms")
    op.drop_index("ix_login_sessions_guest_id", table_name="login_sessions")
    op.drop_index("ix_login_sessions_account_id", table_name="login_sessions")
    op.drop_table("login_sessions")
    op.drop_table("accounts")
