"""Every test here may take `db_url` or `records`: each runs on SQLite and PostgreSQL."""

from tests.db.backends import (  # noqa: F401
    backend_url,
    db_url,
    pg_url,
    records,
    sqlite_template,
)
