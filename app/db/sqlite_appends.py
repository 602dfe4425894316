"""The SQLite writer's fast path: a batch of appends through the driver itself.

A quiet evening's batches hold one or two actions each, and there the fixed
cost of a transaction through SQLAlchemy (a pooled connection, two driver
statements, the compiled-statement machinery) was about 250 us of CPU per
batch, against about 65 us for the same BEGIN / executemany / COMMIT on the
bare sqlite3 connection (timed on `_write_batch` itself; bench/db.py shows the
whole round trip, 0.39 ms per append for one room appending back to back).
This class does exactly that.  The SQL is compiled from the records' own
statement and the values go through the columns' own bind processors, so a
row written here is the row SQLAlchemy would have written.  A batch's other
writes (a room saved, a game started) run after its appends in the same
transaction, as SQLAlchemy statements on the same connection (`run`'s
`then`).

The log's order rule (action n goes in only after action n - 1) is checked
here once per batch, not by each row's INSERT.  The guarded statement that
PostgreSQL and the row-by-row replay use, INSERT ... SELECT ... WHERE EXISTS
on the same table, makes SQLite copy every row through a temporary table
first: 6.4 us per row against 3.6 us for a plain INSERT in a bare sqlite3
loop, and 4% of a move's instructions on the server (bench/load.py
--callgrind).  Inside BEGIN IMMEDIATE nobody else can write, so reading each
game's last seq with one query and then inserting plainly is the same rule;
the primary key still refuses a repeated seq.

Most batches need not even read: the last seq this process committed for a
game (`last_seq`, shared by the loop's and the writer thread's instances)
says where the log ends.  It can only lag behind the log, never run ahead
of it - it is set after a commit, and nothing removes an action but the
deletion of its game - so a batch it approves is in order, or collides with
a row already there on the primary key (someone else appended meanwhile)
and is refused; a batch it does not approve is checked by the query.  A
batch of one append that it approves, with no other writes, is a single
INSERT in SQLite's autocommit mode: a transaction of one statement, with no
BEGIN and COMMIT statements around it (each a driver call of its own).

An `inline` instance runs on the event loop itself (see DbRecords): it must
never wait, so its connection gives up at once on a lock held elsewhere
(`Busy`, and the caller hands the batch to the writer thread, which waits)
and never checkpoints on commit - `checkpoint()`, run from the writer
thread's instance, copies the log back into the database off the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.sql import Insert

from app.db.driver_rows import RowEncoder, column_encoders, faster

#: how long emptying the log waits for readers (`FastAppends.restart`)
RESTART_WAIT_MS = 100
#: games whose last seq one query looks up (well under SQLite's bound-variable limit)
_GAMES_PER_QUERY = 512


class Busy(Exception):
    """Another connection holds the write lock (an inline batch does not wait)."""


class FastAppends:
    """One connection, opened on first use, used by one thread at a time."""

    def __init__(
        self,
        engine: Engine,
        insert: Insert,
        table: Table,
        *,
        inline: bool = False,
        stamp: str,
        last_seq: dict[int, int] | None = None,
    ) -> None:
        """`stamp` names a column every row of a batch gets the same value of,
        given to `run` (the time of the commit): encoded once per batch rather
        than once per row, and left out of the rows' own parameters."""
        self._engine = engine
        self._inline = inline
        dialect = engine.dialect
        compiled = insert.compile(dialect=dialect)
        self._sql = compiled.string
        names = list(compiled.positiontup or ())
        self._table = table.name
        encode = column_encoders(table, dialect)
        self._stamp_at = names.index(stamp)
        self._stamp_encode = encode.get(stamp, faster(None))
        # a row is the parameters in statement order, then the stamp
        row = RowEncoder([n for n in names if n != stamp], encode)
        self._values, self._encoded = row.values, row.encoded
        self._conn: Connection | None = None
        self._kept_cursor: Any = None
        #: each game's last seq this process committed (see the module's docstring)
        self._last: dict[int, int] = {} if last_seq is None else last_seq

    def run(
        self,
        firsts: Sequence[dict[str, Any]],
        nexts: Sequence[dict[str, Any]],
        then: Callable[[Connection], None] | None,
        stamp: datetime,
    ) -> bool:
        """Store every row in one transaction, and run `then` (the batch's other
        writes, through SQLAlchemy on this same connection) inside it: True once
        committed; False, with nothing stored, if any row was refused (a
        repeated or skipped seq), in which case `then` has not run.  `firsts`
        are actions 0 and go in first; each of `nexts` needs its game's
        previous action, in the database or earlier in the batch.  `stamp` is
        the stamp column's value for all of them."""
        dbapi = self._engine.dialect.loaded_dbapi
        cur = self._cursor()
        if then is None and len(firsts) + len(nexts) == 1 and self._known(firsts, nexts):
            try:  # one statement, its own transaction
                cur.execute(self._sql, self._rows((*firsts, *nexts), stamp)[0])
            except dbapi.IntegrityError:
                return False
            except dbapi.OperationalError as err:
                if self._inline:  # locked by another connection: not on the loop
                    raise Busy(str(err)) from err
                raise
            self._committed(firsts, nexts)
            return True
        try:
            cur.execute("BEGIN IMMEDIATE")
        except dbapi.OperationalError as err:
            if self._inline:  # locked by another connection: not on the loop
                raise Busy(str(err)) from err
            raise
        try:
            if self._in_order(cur, firsts, nexts):
                cur.executemany(self._sql, self._rows((*firsts, *nexts), stamp))
                if then is not None:
                    then(self.connection)
                cur.execute("COMMIT")
                self._committed(firsts, nexts)
                return True
        except dbapi.IntegrityError:
            pass
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("ROLLBACK")
        return False

    def _known(self, firsts: Sequence[dict[str, Any]], nexts: Sequence[dict[str, Any]]) -> bool:
        """Whether the last seqs this process committed put the batch's one
        append in order, without reading the log (an action 0 needs nothing
        before it: the primary key refuses a second one)."""
        return not nexts or self._last.get(nexts[0]["game_id"], -1) == nexts[0]["seq"] - 1

    def _committed(self, firsts: Sequence[dict[str, Any]], nexts: Sequence[dict[str, Any]]) -> None:
        last = self._last
        for r in (*firsts, *nexts):
            last[r["game_id"]] = r["seq"]

    def _in_order(
        self, cur: Any, firsts: Sequence[dict[str, Any]], nexts: Sequence[dict[str, Any]]
    ) -> bool:
        """Whether each of `nexts` follows its game's last action: the last seq
        of every game concerned, one index lookup each in one query, then the
        batch's own rows in order."""
        if not nexts:
            return True
        # a game whose first append here follows what this process last
        # committed needs no reading: the log ends there, or further on, and
        # then the primary key refuses the row
        known = self._last
        last: dict[int, int] = {}
        for r in reversed(nexts):
            if known.get(r["game_id"], -1) == r["seq"] - 1:
                last[r["game_id"]] = r["seq"] - 1
            else:
                last.pop(r["game_id"], None)
        games = sorted({r["game_id"] for r in nexts if r["game_id"] not in last})
        for i in range(0, len(games), _GAMES_PER_QUERY):
            part = games[i : i + _GAMES_PER_QUERY]
            # padded to a power of two with a game that does not exist, so that a
            # handful of statement texts serve every batch from the driver's cache
            size = 1 << (len(part) - 1).bit_length()
            part += [-1] * (size - len(part))
            values = ",".join(["(?)"] * size)
            cur.execute(
                f"WITH g(id) AS (VALUES {values}) "
                f"SELECT id, (SELECT max(seq) FROM {self._table} WHERE game_id = g.id) FROM g",
                part,
            )
            last.update((game_id, seq) for game_id, seq in cur.fetchall() if seq is not None)
        for r in firsts:
            last.setdefault(r["game_id"], 0)  # already there, the primary key refuses it
        for r in nexts:
            if last.get(r["game_id"], -1) != r["seq"] - 1:
                return False
            last[r["game_id"]] = r["seq"]
        return True

    def checkpoint(self) -> int:
        """Copy committed log pages back into the database file, without
        waiting for readers or holding up writers (SQLite's PASSIVE mode): the
        number of pages the log holds."""
        cur = self._connection().execute("PRAGMA wal_checkpoint(PASSIVE)")
        try:
            _busy, pages, _copied = cur.fetchone()
        finally:
            cur.close()
        return int(pages)

    def restart(self) -> None:
        """Copy the whole log back and have the next write start it over from
        the top (SQLite's RESTART mode).  The caller keeps its own writers away
        meanwhile (DbRecords._checkpoint_soon); readers still on the log are
        waited for RESTART_WAIT_MS at most, since writers are held back while
        it waits, and if one outlasts that the next checkpoint asks again.
        The file keeps its size and is written over; TRUNCATE would shrink
        it, at the price of another flush to disk - 5 ms against 1 ms on this
        machine, with the rooms' writes waiting."""
        db = self._connection()
        cur = db.execute("PRAGMA busy_timeout")
        try:
            wait = int(cur.fetchone()[0])
        finally:
            cur.close()
        db.execute(f"PRAGMA busy_timeout={RESTART_WAIT_MS}").close()
        try:
            db.execute("PRAGMA wal_checkpoint(RESTART)").close()
        finally:
            db.execute(f"PRAGMA busy_timeout={wait}").close()

    def close(self) -> None:
        if self._conn is not None:
            self._kept_cursor = None
            self._conn.close()
            self._conn = None

    def _cursor(self) -> Any:
        """The driver cursor `run` uses, kept for the connection's life: one
        cursor serves any number of statements, one after another."""
        cur = self._kept_cursor
        if cur is None:
            cur = self._kept_cursor = self._connection().cursor()
        return cur

    def _rows(self, params: Sequence[dict[str, Any]], stamp: Any) -> list[list[Any]]:
        values, encoded, at = self._values, self._encoded, self._stamp_at
        stamped = self._stamp_encode(stamp)
        rows = []
        for p in params:
            row = list(values(p))
            for i, process in encoded:
                row[i] = process(row[i])
            row.insert(at, stamped)
            rows.append(row)
        return rows

    @property
    def connected(self) -> bool:
        return self._conn is not None

    def connect(self) -> None:
        """Open the connection now (opening runs pragmas that may wait on a lock:
        an inline instance is opened from the writer thread, never on the loop)."""
        self._connection()

    @property
    def connection(self) -> Connection:
        """The same connection for SQLAlchemy statements (the writes of
        app/db/writes.py), which then share its transactions and settings."""
        self._connection()
        assert self._conn is not None
        return self._conn

    def _connection(self) -> Any:
        if self._conn is None:
            conn = self._engine.connect()
            conn.detach()  # its settings are its own: never back to the pool
            raw = conn.connection.dbapi_connection
            assert raw is not None
            raw.isolation_level = None  # BEGIN/COMMIT are ours
            if self._inline:
                raw.execute("PRAGMA busy_timeout=0").close()
                raw.execute("PRAGMA wal_autocheckpoint=0").close()
            self._conn = conn
        return self._conn.connection.dbapi_connection
