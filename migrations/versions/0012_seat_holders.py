"""Who holds a seat, and who was shown the door

A seat link moves a seat, never a person: while a place is held on a device
through someone else's seat link (`players.lent`), the person's own identity
may not follow that seat's cards in a running game, and the device may not
move the person.  And the people a host removed from a room (`rooms.removed`:
their guest identity's hash, account id, name) cannot walk back in from the
same browser or account until the host lets them.

Revision: 0012_seat_holders
Parent:   0011_schema_floor
Created:  by hand

Expand only: two nullable columns.  The previous release neither reads nor
writes them (its updates name their columns, its inserts leave them null,
which this release reads as "not lent" and "nobody removed"), so it keeps
running against an upgraded database and the schema floor stays where it is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_seat_holders"
down_revision = "0011_schema_floor"
branch_labels = None
depends_on = None


# Plain ALTER TABLE both ways, never a batch (see 0010_bot_levels: a batch on
# SQLite copies the table, and the drop would cascade to game seats).


def upgrade() -> None:
    op.add_column("players", sa.Column("lent", sa.Boolean(), nullable=True))
    op.add_column("rooms", sa.Column("removed", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("rooms", "removed")
    op.drop_column("players", "lent")
