"""Room owner epochs

Several processes share the rooms: each open room has one owner at a time,
and its epoch - larger at every takeover - fences the action log: an append
carrying an older epoch than the room's is refused (app/store/cluster.py).

Revision: 0003
Parent:   0002
Created:  by hand

The one server default of the schema: existing rooms need a value when the
column is added, and 0 is every room's epoch in one process.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rooms") as batch:
        batch.add_column(
            sa.Column("epoch", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    with op.batch_alter_table("rooms") as batch:
        batch.drop_column("epoch")
