"""Rows for SQLite's own driver, encoded as SQLAlchemy would encode them.

Some writes repeat with the same statement, often with many rows: the log's
appends (app/db/sqlite_appends.py), and a game's start and finish with the
summaries it adds to (app/db/writes.py, app/db/summaries.py).  Through
SQLAlchemy, each statement's parameters, row by row, go through its
compiled-statement machinery, which cost a finished game's summaries about
as much as everything else its writes did (bench/guard.py: about 12,000
instructions per action of a Big Two game, of 670,000).  Here a statement is
compiled once per dialect and set of keys, and each row is its values in
statement order (one C call) with only the values that need it encoded, by
their binds' own types (`TypeEngine.bind_processor`), so a row written here
is the row SQLAlchemy would have written.

Only the plain sqlite3 driver (`pysqlite`, the SQLite writer's) takes this
path; anything else - PostgreSQL, aiosqlite - runs the same statement
through SQLAlchemy (`DriverStatement`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, DateTime, Table
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import Insert, Update
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.types import TypeEngine


def column_encoders(table: Table, dialect: Dialect) -> dict[str, Callable[[Any], Any]]:
    """Each column's encoder for `dialect`, for the columns that have one."""
    found = {col.name: encoder(col.type, dialect) for col in table.columns}
    return {name: process for name, process in found.items() if process is not None}


def encoder(kind: TypeEngine[Any], dialect: Dialect) -> Callable[[Any], Any] | None:
    """A type's bind processor for `dialect` (None: values go as they are), a
    time's replaced by `faster` where that writes the same text."""
    process = kind.dialect_impl(dialect).bind_processor(dialect)
    if process is not None and isinstance(kind, DateTime):
        return faster(process)
    return process


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


#: the drivers whose statements go to the driver itself: the SQLite writer's
DRIVERS = frozenset({"pysqlite"})


class DriverStatement:
    """One statement, its parameters sent to the sqlite3 driver itself:
    compiled on first use for each dialect and set of keys, each value
    encoded by its bind's own type, as SQLAlchemy would encode it."""

    def __init__(self, stmt: Insert | Update) -> None:
        self._stmt = stmt
        #: by dialect object, not name: its bind processors are its own (its
        #: JSON serializer, say), and a process may hold several engines
        self._compiled: dict[tuple[Dialect, tuple[str, ...]], tuple[str, RowEncoder]] = {}

    def executemany(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run it once per row (all with the same keys), in `conn`'s transaction."""
        if not rows:
            return
        if conn.dialect.driver not in DRIVERS:
            conn.execute(self._stmt, list(rows))
            return
        sql, encode = self._prepared(conn.dialect, tuple(rows[0]))
        cur = self._cursor(conn)
        try:
            cur.executemany(sql, [encode(r) for r in rows])
        finally:
            cur.close()

    def execute(self, conn: Connection, params: Mapping[str, Any]) -> list[Sequence[Any]]:
        """Run it once, in `conn`'s transaction: the rows it returns (RETURNING),
        as the driver gives them - so only columns no type decodes (ids)."""
        if conn.dialect.driver not in DRIVERS:
            result = conn.execute(self._stmt, dict(params))
            return list(result.all()) if result.returns_rows else []
        sql, encode = self._prepared(conn.dialect, tuple(params))
        cur = self._cursor(conn)
        try:
            cur.execute(sql, encode(params))
            return list(cur.fetchall())
        finally:
            cur.close()

    @staticmethod
    def _cursor(conn: Connection) -> Any:
        driver = conn.connection.dbapi_connection
        assert driver is not None
        return driver.cursor()

    def _prepared(self, dialect: Dialect, keys: tuple[str, ...]) -> tuple[str, RowEncoder]:
        found = self._compiled.get((dialect, keys))
        if found is None:
            found = self._compiled[(dialect, keys)] = self._compile(dialect, keys)
        return found

    def _compile(self, dialect: Dialect, keys: tuple[str, ...]) -> tuple[str, RowEncoder]:
        compiled = self._stmt.compile(dialect=dialect, column_keys=list(keys))
        assert isinstance(compiled, SQLCompiler)
        names = list(compiled.positiontup or ())
        unknown = [n for n in names if n not in keys]
        if unknown:  # a value SQLAlchemy would have made itself (a default)
            raise ValueError(f"no value given for {unknown}: {compiled.string}")
        if any(compiled.binds[n].expanding for n in names) or "POSTCOMPILE" in compiled.string:
            raise ValueError(f"a list to expand: {compiled.string}")
        found = {n: encoder(compiled.binds[n].type, dialect) for n in names}
        encode = {n: process for n, process in found.items() if process is not None}
        return compiled.string, RowEncoder(names, encode)


def _same(value: Any) -> Any:
    return value


#: a time to compare two encoders on: a date and time with every field
#: distinct, some under ten (zero-padded), and a time zone (which is dropped)
_PROBE = datetime(2031, 2, 3, 4, 5, 6, 78, tzinfo=timezone(timedelta(hours=5)))


def faster(encode: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """A time column's encoder, with `_MinuteText` for a datetime when that
    writes the same text: SQLAlchemy's SQLite DATETIME fills a `%`-format
    from a dict of the fields, and `datetime.isoformat` formats each field
    through C's `sprintf` (about 7,000 instructions a value in bench/guard.py,
    where each action's stamp is one).  Checked here on `_PROBE` and on the
    time now, so a dialect that stores times differently keeps its own
    encoder."""
    own = encode or _same
    text = _MinuteText()

    def iso(value: Any) -> Any:
        if type(value) is datetime:
            return text(value)
        return own(value)

    now = datetime.now(UTC)
    if all(own(t) == iso(t) for t in (_PROBE, now, now.replace(microsecond=0))):
        return iso
    return own


#: "00" to "59", for the seconds
_SECONDS = [f"{s:02d}" for s in range(60)]


class _MinuteText:
    """A datetime as `isoformat(" ", "microseconds")` writes it, with its
    zone dropped: the text up to the minute is made once per minute (the
    stamps of one minute share it), the seconds and the fraction each time."""

    def __init__(self) -> None:
        self._minute: tuple[int, int, int, int, int] | None = None
        self._head = ""

    def __call__(self, value: datetime) -> str:
        minute = (value.minute, value.hour, value.day, value.month, value.year)
        if minute != self._minute:
            start = value.replace(second=0, microsecond=0, tzinfo=None)
            self._head = start.isoformat(" ", "minutes") + ":"
            self._minute = minute
        return f"{self._head}{_SECONDS[value.second]}.{str(value.microsecond + 1_000_000)[1:]}"
