"""The schema's floor: the oldest release that can still run on it

A server refuses a database whose schema it does not know - but a database
migrated past a release by expand-only migrations (new tables, nullable
columns) still suits that release, and a rolling upgrade runs the previous
release against it for a while.  So the database names the oldest release
head that can still run on it (`schema_floor.revision`); a server whose own
migrations include that revision runs on a newer schema
(app/db/setup.py, `check_schema`).

Revision: 0011_schema_floor
Parent:   0010_bot_levels
Created:  by hand

Expand only: a new table.  The floor starts here, at the first release that
reads it.  A later expand-only migration leaves it as it is; a contract
migration (dropping what an older release still uses) raises it to the
oldest release that no longer uses what it drops.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_schema_floor"
down_revision = "0010_bot_levels"
branch_labels = None
depends_on = None


def upgrade() -> None:
    floor = op.create_table(
        "schema_floor",
        sa.Column("revision", sa.String(64), primary_key=True),
    )
    op.bulk_insert(floor, [{"revision": revision}])


def downgrade() -> None:
    op.drop_table("schema_floor")
