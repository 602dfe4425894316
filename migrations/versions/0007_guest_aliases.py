"""Guest aliases: a move link takes the person, not only the place

A guest who moves to another device with their own move link becomes the
same person there: the new browser's fresh cookie is recorded as an alias of
the person's guest id, and the old browser's cookie as revoked
(app/db/models.py, `GuestAlias`; app/db/accounts.py, `move_guest`).

Revision: 0007
Parent:   0006_guest_hashes
Created:  by hand

Expand only: a new table, which the previous release never reads nor
writes.  While both releases run, a request the previous release answers
knows no alias: a moved guest's new browser is a new guest there, and the
old browser is still the person - the state before this release.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006_guest_hashes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "guest_aliases",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("guest_id", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_guest_aliases")),
    )
    op.create_index(op.f("ix_guest_aliases_guest_id"), "guest_aliases", ["guest_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_guest_aliases_guest_id"), table_name="guest_aliases")
    op.drop_table("guest_aliases")
