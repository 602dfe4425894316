"""The records' summaries of finished games

`seat_results`, one row per seat of a finished game (place, score, Posso
hands won and Possos taken, the public person id); `person_totals` and
`person_pairs`, their sums per person and per two people, and
`series_points`, each room's Big Two tally
(app/db/summaries.py), so that a person's records and a head-to-head read a
few rows however many games there are.  Expand-only: new tables the previous
release never reads, filled here for the games already finished.

Revision: 0005
Parent:   0004
Created:  by hand

The fill calls the same `record_game` and `recount` the app calls, so the
rows written here are the rows a game finished today gets.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
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
    op.create_table(
        "person_totals",
        sa.Column("person", sa.String(64), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        *_sums(),
        sa.PrimaryKeyConstraint("person", "game", "place", name="pk_person_totals"),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "person_pairs",
        sa.Column("person", sa.String(64), nullable=False),
        sa.Column("other", sa.String(64), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("together", sa.Integer(), nullable=False),
        sa.Column("higher", sa.Integer(), nullable=False),
        sa.Column("lower", sa.Integer(), nullable=False),
        *_sums(),
        *_sums("other_"),
        sa.PrimaryKeyConstraint("person", "other", "game", name="pk_person_pairs"),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_seat_results_room_id", "seat_results", ["room_id", "game"])
    op.create_table(
        "series_points",
        sa.Column("room_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("person", sa.String(64), nullable=True),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("room_id", "player_id", name="pk_series_points"),
        sqlite_with_rowid=False,
    )
    op.create_index(
        "ix_series_points_person", "series_points", ["person", "room_id", "points"]
    )
    op.create_index("ix_series_points_room_id", "series_points", ["room_id", "points"])
    from app.db.summaries import record_game, recount

    conn = op.get_bind()
    finished = conn.execute(
        sa.text("SELECT id FROM games WHERE finished_at IS NOT NULL ORDER BY id")
    ).scalars()
    for game_id in list(finished):
        record_game(conn, game_id, sums=False)
    recount(conn)


def _sums(prefix: str = "") -> list[sa.Column[object]]:
    """A side's Posso sums: games scored, their sum, the best, hands won, Possos."""
    return [
        sa.Column(f"{prefix}scored", sa.Integer(), nullable=False),
        sa.Column(f"{prefix}score_sum", sa.BigInteger(), nullable=False),
        sa.Column(f"{prefix}best", sa.Integer(), nullable=True),
        sa.Column(f"{prefix}hands_won", sa.Integer(), nullable=False),
        sa.Column(f"{prefix}possos", sa.Integer(), nullable=False),
    ]


def downgrade() -> None:
    op.drop_index("ix_series_points_room_id", table_name="series_points")
    op.drop_index("ix_series_points_person", table_name="series_points")
    op.drop_table("series_points")
    op.drop_index("ix_seat_results_room_id", table_name="seat_results")
    op.drop_table("person_pairs")
    op.drop_table("person_totals")
    op.drop_index("ix_seat_results_person", table_name="seat_results")
    op.drop_table("seat_results")
