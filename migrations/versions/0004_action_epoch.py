"""Each stored action's owner epoch

Several processes share the rooms; each action is tagged with the owner epoch
of the process that wrote it (app/db/records.py), so a history checker can
tell who wrote what, and a process that lost an append's answer can tell its
own row from a newer owner's at the same position (app/rooms/table.py).

Revision: 0004
Parent:   0003
Created:  by hand

Expand only: a nullable column with no default, which the previous release
neither reads nor writes (its inserts leave it null).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("epoch", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.drop_column("epoch")
