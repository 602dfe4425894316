"""Public game ids

Game ids were the table's sequence, shown on every history page and route:
anyone could count the games a server had played, and walk them.  Each game
now has a random public id (app/store/records.py, `new_game_ref`) that pages
and routes show; a game's number still resolves, for those it is shown to
(app/api/history.py), so links made before keep working.

Revision: 0013_public_game_ids
Parent:   0012_seat_holders
Created:  by hand

Expand only: one nullable column, filled for every stored game, and a unique
index on it.  The previous release neither reads nor writes it, so it keeps
running against an upgraded database (the floor stays at 0011); a game it
starts meanwhile has null, which this release shows by its number.  The
contract step, a release later: fill what is still null, make the column
NOT NULL, stop resolving numbers, and raise the floor.
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0013_public_game_ids"
down_revision = "0012_seat_holders"
branch_labels = None
depends_on = None

#: games filled per statement batch
CHUNK = 1000


def _new_id() -> str:
    # the same recipe as app/store/records.py's new_game_ref, kept here so the
    # migration stays what it was whatever the app's code becomes
    while True:
        ref = secrets.token_urlsafe(12)
        if not ref.isdigit():
            return ref


# Plain ALTER TABLE both ways, never a batch (see 0010_bot_levels): on SQLite
# a batch would copy `games`, and every table referencing it would lose its
# rows to ON DELETE CASCADE.


def upgrade() -> None:
    op.add_column("games", sa.Column("public_id", sa.String(32), nullable=True))
    conn = op.get_bind()
    games = sa.table("games", sa.column("id", sa.Integer), sa.column("public_id", sa.String))
    fill = (
        sa.update(games)
        .where(games.c.id == sa.bindparam("gid"))
        .values(public_id=sa.bindparam("ref"))
    )
    last = 0
    while True:
        ids = list(
            conn.scalars(
                sa.select(games.c.id)
                .where(games.c.id > last, games.c.public_id.is_(None))
                .order_by(games.c.id)
                .limit(CHUNK)
            )
        )
        if not ids:
            break
        conn.execute(fill, [{"gid": gid, "ref": _new_id()} for gid in ids])
        last = ids[-1]
    op.create_index("uq_games_public_id", "games", ["public_id"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_games_public_id", table_name="games")
    op.drop_column("games", "public_id")
