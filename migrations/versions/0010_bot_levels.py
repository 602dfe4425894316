"""Bot levels

The host picks a bot's level (easy, normal, strong) when adding it, and the
level is kept with the bot's seat, so a rebuilt room's bots play as they did.

Revision: 0010_bot_levels
Parent:   0009_push
Created:  by hand

Expand only: one nullable column.  The previous release neither reads nor
writes it, so it keeps running against an upgraded database; the rows it
saves meanwhile leave the column as it was (its updates name their columns),
and a bot row it inserts has null, which this release reads as normal - the
level every bot had before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_bot_levels"
down_revision = "0009_push"
branch_labels = None
depends_on = None


# Plain ALTER TABLE both ways, never a batch: on SQLite a batch drop would
# copy `players` to a new table and drop the old one, and the game seats that
# reference it (ON DELETE CASCADE, foreign keys on) would go with it.  SQLite
# drops a column in place since 3.35.


def upgrade() -> None:
    op.add_column("players", sa.Column("bot_level", sa.String(16), nullable=True))


def downgrade() -> None:
    op.drop_column("players", "bot_level")
