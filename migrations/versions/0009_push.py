"""Web Push: the server's VAPID key pair and the browsers' subscriptions

Revision: 0009_push
Parent:   0008
Created:  by hand

Expand only: two new tables the previous release never reads, so it keeps
running against an upgraded database.  The key pair is made by the first
server that starts on this database (app/db/push.py), not here: a migration
that wrote a private key would leave it in whatever ran the migration's logs
and backups of the schema step, and every process must read the one row
anyway.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_push"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "push_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("private_pem", sa.Text(), nullable=False),
        sa.Column("public_key", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_push_keys"),
    )
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("endpoint", sa.String(1024), nullable=False),
        sa.Column("p256dh", sa.String(128), nullable=False),
        sa.Column("auth", sa.String(64), nullable=False),
        sa.Column("guest_id", sa.String(128), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_push_subscriptions_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_push_subscriptions"),
        sa.UniqueConstraint("endpoint", name="uq_push_subscriptions_endpoint"),
    )
    op.create_index("ix_push_subscriptions_guest_id", "push_subscriptions", ["guest_id"])
    op.create_index("ix_push_subscriptions_account_id", "push_subscriptions", ["account_id"])


def downgrade() -> None:
    op.drop_table("push_subscriptions")
    op.drop_table("push_keys")
