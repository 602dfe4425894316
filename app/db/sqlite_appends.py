"""The SQLite writer's fast path: a batch of appends through the driver itself.

A quiet evening's batches hold one or two actions each, and there the fixed
cost of a transaction through SQLAlchemy (a pooled connection, two driver
statements, the compiled-statement machinery) was about 250 us of CPU per
batch, against about 65 us for the same BEGIN / executemany / COMMIT on the
bare sqlite3 connection (timed on `_write_batch` itself; bench/db.py shows the
whole round trip, 0.39 ms per append for one room appending back to back).
This class does exactly that and no more.  The SQL is compiled from the records' own statements and the values go
through the columns' own bind processors, so a row written here is the row
SQLAlchemy would have written; everything that is not a plain batch of
appends still takes the general path in app/db/records.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, Table
from sqlalchemy.sql import Insert


class FastAppends:
    """Runs in the writer thread only (the connection is opened there, lazily)."""

    def __init__(self, engine: Engine, first: Insert, nxt: Insert, table: Table) -> None:
        self._engine = engine
        dialect = engine.dialect
        self._sql: list[tuple[str, list[str]]] = []
        for stmt in (first, nxt):
            compiled = stmt.compile(dialect=dialect)
            self._sql.append((compiled.string, list(compiled.positiontup or ())))
        self._encode: dict[str, Callable[[Any], Any]] = {}
        for col in table.columns:
            process = col.type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None:
                self._encode[col.name] = process
        self._proxy: Any = None

    def run(self, firsts: Sequence[dict[str, Any]], nexts: Sequence[dict[str, Any]]) -> bool:
        """Store every row in one transaction: True once committed; False, with
        nothing stored, if any row was refused (a repeated or skipped seq)."""
        raw = self._connection()
        cur = raw.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
            try:
                stored = 0
                for (sql, names), rows in zip(self._sql, (firsts, nexts), strict=True):
                    if rows:
                        cur.executemany(sql, [self._row(names, r) for r in rows])
                        stored += cur.rowcount
            except self._integrity_error():
                stored = -1
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            if stored == len(firsts) + len(nexts):
                cur.execute("COMMIT")
                return True
            cur.execute("ROLLBACK")
            return False
        finally:
            cur.close()

    def close(self) -> None:
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None

    def _row(self, names: list[str], params: dict[str, Any]) -> tuple[Any, ...]:
        encode = self._encode
        return tuple(encode[n](params[n]) if n in encode else params[n] for n in names)

    def _connection(self) -> Any:
        if self._proxy is None:
            self._proxy = self._engine.raw_connection()
            self._proxy.driver_connection.isolation_level = None  # BEGIN/COMMIT are ours
        return self._proxy.driver_connection

    def _integrity_error(self) -> type[BaseException]:
        error: type[BaseException] = self._engine.dialect.loaded_dbapi.IntegrityError
        return error
