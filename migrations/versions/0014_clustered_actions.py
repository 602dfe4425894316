"""The action log clustered on its key (SQLite)

Every move appends one row to `actions` and commits it alone.  As a rowid
table with its primary key (game_id, seq) in an index of its own, each append
wrote two B-trees, so each commit put two pages in SQLite's log, and each
page's checksum and copy cost as much as the insert itself (bench/guard.py:
about 11,000 instructions per move in the log's checksums alone).  Clustered
on its key (WITHOUT ROWID, as the records' summary tables already are), the
row lives in the key's own B-tree: one tree per append, and the reads of a
game's actions (`game_id = ? ORDER BY seq`) walk one tree too.

Revision: 0014_clustered_actions
Parent:   0013_public_game_ids
Created:  by hand

SQLite only: the table is rebuilt with the same name, columns, key and
foreign key, and its rows copied; PostgreSQL's is left as it is.  Neither
release's SQL names a rowid, so the previous release runs on the rebuilt
table as before (the floor stays at 0011).  Downgrade rebuilds it as a rowid
table.  The copy holds the database's write lock for as long as it takes:
`make run` migrates before it serves.
"""

from __future__ import annotations

from alembic import op

revision = "0014_clustered_actions"
down_revision = "0013_public_game_ids"
branch_labels = None
depends_on = None

_COLUMNS = "game_id, seq, seat, action, created_at, epoch"


def _rebuild(clustered: bool) -> None:
    """`actions` again, as it is but for WITHOUT ROWID, with every row."""
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "CREATE TABLE actions_rebuilt ("
        "game_id INTEGER NOT NULL, seq INTEGER NOT NULL, seat INTEGER, "
        "action JSON NOT NULL, created_at DATETIME NOT NULL, epoch INTEGER, "
        "CONSTRAINT pk_actions PRIMARY KEY (game_id, seq), "
        "CONSTRAINT fk_actions_game_id_games FOREIGN KEY(game_id) "
        "REFERENCES games (id) ON DELETE CASCADE)" + (" WITHOUT ROWID" if clustered else "")
    )
    op.execute(
        f"INSERT INTO actions_rebuilt ({_COLUMNS}) "
        f"SELECT {_COLUMNS} FROM actions ORDER BY game_id, seq"
    )
    op.execute("DROP TABLE actions")
    op.execute("ALTER TABLE actions_rebuilt RENAME TO actions")


def upgrade() -> None:
    _rebuild(clustered=True)


def downgrade() -> None:
    _rebuild(clustered=False)
