"""A consistent copy of the card room's database while it runs (`make backup`).

    python -m app.db.backup [DEST]

SQLite: SQLite's online backup API (`sqlite3.Connection.backup`) copies the
database page by page as of one moment, whatever the server writes
meanwhile (in WAL mode a reader never blocks the writer, so no game waits
on it); the copy is one self-contained file with no `-wal` beside it.
Copying the file with `cp` instead could catch it between a write to the
database and one to its log, and lose what the log held.

PostgreSQL: `pg_dump --format=custom`, which reads one snapshot of the live
database (restore with `pg_restore`, README.md "Backups").

DEST defaults to `backups/cardroom-<UTC time>.db` (SQLite) or `.dump`
(PostgreSQL) under the current directory; the database is the one the
settings name (DATABASE_URL, or SQLite under DATA_DIR).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import make_url

from app.core.config import get_settings

#: pages copied per step of the SQLite backup: between steps the server's
#: writes go on (a step holds the database's read lock for a moment only)
PAGES_PER_STEP = 1024


def backup_sqlite(source: Path, dest: Path) -> None:
    """Copy the live SQLite database at `source` to the new file `dest`."""
    if not source.exists():
        raise SystemExit(f"no database at {source}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    src = sqlite3.connect(source)  # reads only; a WAL reader never blocks the writer
    try:
        out = sqlite3.connect(partial)
        try:
            src.backup(out, pages=PAGES_PER_STEP)
            out.execute("PRAGMA journal_mode=DELETE")  # one file, nothing beside it
        finally:
            out.close()
    finally:
        src.close()
    partial.replace(dest)  # never a half-made backup under the final name


def libpq_url(database_url: str) -> str:
    """The SQLAlchemy URL as pg_dump and pg_restore take it (no `+asyncpg`)."""
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def backup_postgres(database_url: str, dest: Path) -> None:
    """`pg_dump` of the live PostgreSQL database to `dest` (custom format)."""
    tool = shutil.which("pg_dump")
    if tool is None:
        raise SystemExit("pg_dump is not installed (Debian: apt-get install postgresql-client)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    done = subprocess.run(
        [tool, "--format=custom", f"--file={partial}", "--dbname", libpq_url(database_url)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise SystemExit(f"pg_dump failed: {done.stderr.strip()}")
    partial.replace(dest)


def backup(dest: Path | None = None) -> Path:
    """Back up the database the settings name; where the copy went."""
    url = get_settings().resolved_database_url()
    parsed = make_url(url)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    if parsed.get_backend_name() == "postgresql":
        dest = dest or Path("backups") / f"cardroom-{stamp}.dump"
        backup_postgres(url, dest)
    elif parsed.get_backend_name() == "sqlite" and parsed.database:
        dest = dest or Path("backups") / f"cardroom-{stamp}.db"
        backup_sqlite(Path(parsed.database), dest)
    else:
        raise SystemExit(f"cannot back up {parsed.get_backend_name()} databases")
    return dest


def main(argv: list[str]) -> None:
    dest = backup(Path(argv[0]) if argv else None)
    print(dest)


if __name__ == "__main__":
    main(sys.argv[1:])
