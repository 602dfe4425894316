"""Rows for SQLite's own driver, encoded as SQLAlchemy would encode them.

Some writes repeat with the same statement and many rows: the log's appends
(app/db/sqlite_appends.py) and the summaries a finished game adds to
(app/db/summaries.py).  Through SQLAlchemy, each row of an executemany is
turned into parameters by its compiled-statement machinery, which cost a
finished game's summaries about as much as everything else its writes did
(bench/guard.py: about 50,000 instructions per action of a Big Two game,
against 640,000 for the whole action).  Here a statement is compiled once per
dialect and set of keys, and each row is its values in statement order
(one C call) with only the columns that need it encoded, by the columns' own
bind processors (`TypeEngine.bind_processor`), so a row written here is the
row SQLAlchemy would have written.

Only the plain sqlite3 driver (`pysqlite`, the SQLite writer's) takes this
path; anything else - PostgreSQL, aiosqlite - runs the same statement
through SQLAlchemy (`DriverInsert.executemany`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, DateTime, Table
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import Insert


def column_encoders(table: Table, dialect: Dialect) -> dict[str, Callable[[Any], Any]]:
    """Each column's bind processor for `dialect`, for the columns that have one
    (a time's replaced by `faster` where that writes the same text)."""
    encode: dict[str, Callable[[Any], Any]] = {}
    for col in table.columns:
        process = col.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            encode[col.name] = faster(process) if isinstance(col.type, DateTime) else process
    return encode


class RowEncoder:
    """Parameters by name -> a row in statement order, encoded."""

    def __init__(self, names: Sequence[str], encode: Mapping[str, Callable[[Any], Any]]) -> None:
        names = list(names)
        #: the values in statement order, as one C call
        self.values: Callable[[Mapping[str, Any]], tuple[Any, ...]] = (
            itemgetter(*names) if len(names) > 1 else lambda p: (p[names[0]],)
        )
        #: (position, encoder) of the values that need encoding
        self.encoded = [(i, encode[n]) for i, n in enumerate(names) if n in encode]

    def __call__(self, params: Mapping[str, Any]) -> list[Any]:
        row = list(self.values(params))
        for i, process in self.encoded:
            row[i] = process(row[i])
        return row


class DriverInsert:
    """One INSERT (or upsert) of `table`, its rows sent to the sqlite3 driver's
    executemany: compiled on first use for each dialect and set of keys."""

    def __init__(self, stmt: Insert, table: Table) -> None:
        self._stmt = stmt
        self._table = table
        self._compiled: dict[tuple[str, tuple[str, ...]], tuple[str, RowEncoder]] = {}

    def executemany(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """Write `rows` (all with the same keys) on `conn`, in its transaction."""
        if not rows:
            return
        dialect = conn.dialect
        if dialect.driver != "pysqlite":
            conn.execute(self._stmt, list(rows))
            return
        keys = tuple(rows[0])
        found = self._compiled.get((dialect.name, keys))
        if found is None:
            found = self._compiled[(dialect.name, keys)] = self._compile(dialect, keys)
        sql, encode = found
        driver = conn.connection.dbapi_connection
        assert driver is not None
        cur = driver.cursor()
        try:
            cur.executemany(sql, [encode(r) for r in rows])
        finally:
            cur.close()

    def _compile(self, dialect: Dialect, keys: tuple[str, ...]) -> tuple[str, RowEncoder]:
        compiled = self._stmt.compile(dialect=dialect, column_keys=list(keys))
        names = list(compiled.positiontup or ())
        unknown = [n for n in names if n not in keys]
        if unknown:  # a value SQLAlchemy would have made itself (a default)
            raise ValueError(f"{self._table.name}: no value given for {unknown}")
        return compiled.string, RowEncoder(names, column_encoders(self._table, dialect))


def _same(value: Any) -> Any:
    return value


#: a time to compare two encoders on: a date and time with every field
#: distinct, some under ten (zero-padded), and a time zone (which is dropped)
_PROBE = datetime(2031, 2, 3, 4, 5, 6, 78, tzinfo=timezone(timedelta(hours=5)))


def faster(encode: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """A time column's encoder, with `datetime.isoformat` for a datetime when
    that writes the same text: SQLAlchemy's SQLite DATETIME fills a `%`-format
    from a dict of the fields, about 13,000 instructions a value, against
    about 1,000.  Checked here on `_PROBE` and on the time now, so a dialect
    that stores times differently keeps its own encoder."""
    own = encode or _same

    def iso(value: Any) -> Any:
        if type(value) is datetime:
            return value.replace(tzinfo=None).isoformat(" ", "microseconds")
        return own(value)

    now = datetime.now(UTC)
    if all(own(t) == iso(t) for t in (_PROBE, now, now.replace(microsecond=0))):
        return iso
    return own
