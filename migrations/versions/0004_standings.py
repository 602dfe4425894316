"""Seat results: the records' summary of finished games

One row per seat of a finished game (place, score, Posso hands won and
Possos taken, and the public person id), so that a person's records and a
head-to-head read one person's rows through a covering index
(app/db/standings.py).  Expand-only: a new table the previous release never
reads, filled here for the games already finished.

Revision: 0004_standings
Parent:   0003
Created:  by hand

The fill calls the same `record_game` that finishing a game calls, so the
rows written here are the rows a game finished today gets.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_standings"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "seat_results",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("person", sa.String(64), nullable=True),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("room_id", sa.Integer(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("hands_won", sa.Integer(), nullable=True),
        sa.Column("possos", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_seat_results_game_id_games", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", "seat", name="pk_seat_results"),
        sqlite_with_rowid=False,
    )
    op.create_index(
        "ix_seat_results_person",
        "seat_results",
        [
            "person",
            "game_id",
            "game",
            "place",
            "score",
            "hands_won",
            "possos",
            "room_id",
            "player_id",
        ],
    )
    from app.db.standings import record_game

    conn = op.get_bind()
    finished = conn.execute(
        sa.text("SELECT id FROM games WHERE finished_at IS NOT NULL ORDER BY id")
    ).scalars()
    for game_id in list(finished):
        record_game(conn, game_id)


def downgrade() -> None:
    op.drop_index("ix_seat_results_person", table_name="seat_results")
    op.drop_table("seat_results")
