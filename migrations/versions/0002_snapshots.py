"""Game snapshots

A room is rebuilt from its game's latest snapshot plus the actions after it,
not by replaying the whole log (app/rooms/snapshots.py).

Revision: 0002
Parent:   0001
Created:  by hand
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("engine", sa.String(64), nullable=False),
        sa.Column("state", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_snapshots_game_id_games", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", name="pk_snapshots"),
    )


def downgrade() -> None:
    op.drop_table("snapshots")
