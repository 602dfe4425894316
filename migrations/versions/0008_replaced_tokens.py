"""What became of replaced seat tokens, kept with the room

When a link moves a place to another device, the old device, if it comes
back, is told in plain words what happened and by whom.  The room kept that
in memory only, so after a restart the old device got a bare `bad_token`;
now it is saved with the room (app/db/models.py, `Room.replaced`; bounded by
app/rooms/membership.py to 64 tokens and 7 days).

Revision: 0008
Parent:   0007
Created:  by hand

Expand only: a nullable column with no default.  The previous release
neither reads nor writes it (its updates name their columns, its inserts
leave it null): while both run, a room it saves keeps what is stored, and a
room it rebuilds answers a replaced token with `bad_token`, as it always did.
"""

from __future__ import annotations

import sqlite3

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("rooms", sa.Column("replaced", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Not in a batch: on SQLite a batch copies `rooms` into a new table and
    drops the old one, and the drop would cascade to every game of every
    room.  SQLite drops a column in place since 3.35; an older one keeps
    it (nullable, and the previous release never names it)."""
    if op.get_bind().dialect.name == "sqlite":
        if sqlite3.sqlite_version_info >= (3, 35):
            op.execute("ALTER TABLE rooms DROP COLUMN replaced")
    else:
        op.drop_column("rooms", "replaced")
