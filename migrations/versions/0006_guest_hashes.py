"""Guest identities stored as hashes

A guest cookie is a bearer secret: whoever holds its value sees that
browser's games.  From this release on the server keeps only its SHA-256
(app/api/identity.py, `guest_key`) in `players.guest_id` and
`login_sessions.guest_id`; this migration hashes the values stored before.

Revision: 0006_guest_hashes
Parent:   0005
Created:  by hand

Expand now, contract later.  The schema does not change, so the previous
release keeps running against an upgraded database while both are deployed:
it reads and writes the same columns without an error.  What it loses for
that while is only the guest history of rows stored before the upgrade (it
looks them up by the raw cookie, which is no longer there) - the price of
taking the secrets out of the database at once rather than after the
rollout.  Rows it writes meanwhile hold raw cookies again; the contract
step, a later migration once no server of the previous release runs, calls
`hash_raw_guests` again (it is idempotent: a 64-hex value is a hash already,
a cookie is 43 characters) and only then may the code rely on every value
being a hash.

The records' summaries (0005_standings) hold person ids made from guest ids;
they are made again from the hashes here, with the functions that filled them.

Downgrading leaves the hashes: a hash cannot be turned back into a cookie,
and the previous release treats it as a browser it has not seen.
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0006_guest_hashes"
down_revision = "0005"
branch_labels = None
depends_on = None

TABLES = ("players", "login_sessions")


def guest_hash(cookie: str) -> str:
    """The same recipe as app/api/identity.py's guest_key (a migration keeps
    its own copy: it must not change when the app does)."""
    return hashlib.sha256(cookie.encode("utf-8", "surrogatepass")).hexdigest()


def hash_raw_guests(conn: sa.engine.Connection) -> int:
    """Replace every raw guest cookie left in TABLES by its hash; how many
    distinct values were hashed."""
    done = 0
    for table in TABLES:
        raw = conn.execute(
            sa.text(
                f"SELECT DISTINCT guest_id FROM {table} "  # noqa: S608 - a constant
                "WHERE guest_id IS NOT NULL AND length(guest_id) <> 64"
            )
        ).scalars()
        for value in list(raw):
            conn.execute(
                sa.text(f"UPDATE {table} SET guest_id = :h WHERE guest_id = :raw"),  # noqa: S608
                {"h": guest_hash(value), "raw": value},
            )
            done += 1
    return done


def upgrade() -> None:
    conn = op.get_bind()
    if hash_raw_guests(conn):
        refill_summaries(conn)


def refill_summaries(conn: sa.engine.Connection) -> None:
    """The records' summaries (0005_standings) name guests by a person id made
    from the guest id: made again from the hashes, the same way the app makes
    them, with the same functions 0005_standings filled them with."""
    from app.db.summaries import record_game, recount

    finished = conn.execute(
        sa.text("SELECT id FROM games WHERE finished_at IS NOT NULL ORDER BY id")
    ).scalars()
    for game_id in list(finished):
        record_game(conn, game_id, sums=False)
    recount(conn)


def downgrade() -> None:
    """Nothing to undo (see above)."""
