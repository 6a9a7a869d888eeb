"""The receiver on a real PostgreSQL: every worker its own connection, atomicity from the database.

The storage process owns its PostgreSQL server as SQLite's store owns its file: it starts the
server on the run's cluster (lab.postgres) and stops it when it stops, and when the nemesis
kills the storage process (SIGKILL) the server dies with it, a real crash. Each worker's
requests go through a connection of that worker's own, in read committed, so two workers'
writes race inside the database and nothing in this process serialises them:

- `none`: one UPDATE of the data row, whatever the token;
- `fenced`: one conditional statement: the mark row is updated to the token only
  `WHERE hwm <= token`, and the data row in the same statement only if that happened; the
  row count tells accepted from rejected. A write that waited for another one's row lock is
  decided on the row that other write committed (PostgreSQL evaluates the condition again);
- `fenced-nonatomic`: a SELECT of the mark (the check) and, in a second transaction, the
  UPDATEs of the mark and the data row (the apply), so a stale write that passed its check
  before a fresher one was applied sets the mark back down.

The mark is its own one-row table beside the data. `durable`: an ordinary table, written to
the write-ahead log, kept through a crash. `volatile`: an UNLOGGED table, never written to the
log: PostgreSQL empties it in the crash recovery that follows a kill of the store, so the mark
is really lost (a clean stop keeps it, as it keeps every unlogged table; the lab's restart of
the store is always a kill). Each row keeps its previous value in a column (`previous`), so one
statement returns what it replaced, exactly.

The log's order is the database's order: every decision takes its time stamp while it holds
the row lock it was decided under (reads and checks take a share lock for this; a rejected
write reads the mark again under one), and commits after.
"""

from __future__ import annotations

import threading
from typing import Any, Final

import psycopg

from lab.storage import Store

DATA_TABLE: Final = (
    "CREATE TABLE IF NOT EXISTS data (id integer PRIMARY KEY CHECK (id = 1), "
    "value bigint NOT NULL, version bigint NOT NULL, previous bigint NOT NULL DEFAULT 0)"
)
MARK_TABLE: Final = (
    "CREATE {kind}TABLE IF NOT EXISTS mark (id integer PRIMARY KEY CHECK (id = 1), "
    "hwm bigint NOT NULL, previous bigint NOT NULL DEFAULT 0)"
)
FIRST_ROWS: Final = (
    "INSERT INTO data (id, value, version) VALUES (1, 0, 0) ON CONFLICT DO NOTHING",
    "INSERT INTO mark (id, hwm) VALUES (1, 0) ON CONFLICT DO NOTHING",
)
READ: Final = "SELECT value, version FROM data WHERE id = 1 FOR SHARE"
BLIND: Final = (
    "UPDATE data SET previous = value, value = %(value)s, version = version + 1 "
    "WHERE id = 1 RETURNING previous, version"
)
FENCED: Final = (
    "WITH fence AS (UPDATE mark SET previous = hwm, hwm = %(token)s "
    "WHERE id = 1 AND hwm <= %(token)s RETURNING previous) "
    "UPDATE data SET previous = value, value = %(value)s, version = version + 1 "
    "FROM fence WHERE data.id = 1 RETURNING data.previous, data.version, fence.previous"
)
"""The fenced write: one statement, the mark's condition and both rows' updates."""
SEEN: Final = (
    "SELECT data.value, data.version, mark.hwm FROM data, mark "
    "WHERE data.id = 1 AND mark.id = 1 FOR SHARE"
)
CHECK: Final = "SELECT hwm FROM mark WHERE id = 1 FOR SHARE"
SET_MARK: Final = "UPDATE mark SET previous = hwm, hwm = %(token)s WHERE id = 1 RETURNING previous"
DUMP: Final = (
    "COPY (SELECT data.value, data.version, mark.hwm AS mark FROM data, mark "
    "WHERE data.id = 1 AND mark.id = 1) TO STDOUT WITH (FORMAT csv, HEADER)"
)
"""The run folder's copy of the database: the data row and the mark, as CSV."""
FINAL: Final = (
    "SELECT data.value, data.version, mark.hwm FROM data, mark WHERE data.id = 1 AND mark.id = 1"
)


def create_tables(db: psycopg.Connection[Any], volatile: bool) -> None:
    """The data row and the mark row (an unlogged table for a volatile mark), if not there."""
    with db.transaction():
        db.execute(DATA_TABLE)
        db.execute(MARK_TABLE.format(kind="UNLOGGED " if volatile else ""))
        for statement in FIRST_ROWS:
            db.execute(statement)


def dump(db: psycopg.Connection[Any]) -> bytes:
    """The data row and the mark as CSV with a header line (COPY … TO STDOUT)."""
    out = bytearray()
    with db.cursor() as cursor, cursor.copy(DUMP) as copy:
        for chunk in copy:
            out += chunk
    return bytes(out)


def final_row(db: psycopg.Connection[Any]) -> tuple[int, int, int]:
    """The value, its version and the mark, as the tables hold them."""
    row = db.execute(FINAL).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


class PostgresStore(Store):
    """The receiver's rules as statements on PostgreSQL, one connection per worker."""

    def __init__(self, connect: dict[str, Any], *args: Any) -> None:
        super().__init__(*args)
        self.connect = connect
        self.connections: dict[int, psycopg.Connection[Any]] = {}
        self.opening = threading.Lock()
        """Guards the table of connections only (never a read or a write)."""
        self.admin = psycopg.connect(**connect, autocommit=True)
        create_tables(self.admin, self.volatile)

    def connection(self, request: dict[str, Any]) -> psycopg.Connection[Any]:
        """The requesting worker's own connection (opened on its first request)."""
        worker = int(request["worker"])
        with self.opening:
            db = self.connections.get(worker)
            if db is None or db.closed:
                db = psycopg.connect(**self.connect, autocommit=True)
                self.connections[worker] = db
        return db

    def close(self) -> None:
        """Close every connection."""
        with self.opening:
            for db in [*self.connections.values(), self.admin]:
                db.close()
            self.connections.clear()

    def start_mark(self) -> int | None:
        if self.receiver not in ("fenced", "fenced-nonatomic"):
            return None
        row = self.admin.execute("SELECT hwm FROM mark WHERE id = 1").fetchone()
        assert row is not None
        return int(row[0])

    def read(self, request: dict[str, Any]) -> dict[str, Any]:
        db = self.connection(request)
        with db.transaction():
            row = db.execute(READ).fetchone()
            assert row is not None
            at = self.log.now()
        value, version = int(row[0]), int(row[1])
        self.log.record(
            "deliver", at=at, outcome="read", version_before=version, **self.fields(request)
        )
        return {"ok": True, "outcome": "read", "value": value, "version": version}

    def write(self, request: dict[str, Any]) -> dict[str, Any]:
        token, fenced = int(request["token"]), self.receiver == "fenced"
        db = self.connection(request)
        values = {"token": token, "value": int(request["value"])}
        with db.transaction():
            row = db.execute(FENCED if fenced else BLIND, values).fetchone()
            accepted = row is not None
            if row is not None:
                value, version = int(row[0]), int(row[1]) - 1
                before = int(row[2]) if fenced else None
            else:
                seen = db.execute(SEEN).fetchone()
                assert seen is not None
                value, version, before = int(seen[0]), int(seen[1]), int(seen[2])
            at = self.log.now()
        outcome = "accepted" if accepted else "rejected"
        self.log.record(
            "deliver",
            at=at,
            outcome=outcome,
            mark_before=before,
            mark_after=(token if accepted else before) if fenced else None,
            version_before=version,
            version_after=version + 1 if accepted else version,
            **self.fields(request),
        )
        return {"ok": True, "outcome": outcome, "value": value, "version": version}

    def check_then_apply(self, request: dict[str, Any]) -> dict[str, Any]:
        token = int(request["token"])
        db = self.connection(request)
        with db.transaction():
            row = db.execute(CHECK).fetchone()
            assert row is not None
            at = self.log.now()
        mark = int(row[0])
        passed = token >= mark
        self.log.record("check", at=at, passed=passed, mark_before=mark, **self.fields(request))
        if not passed:
            return {"ok": True, "outcome": "rejected"}
        if not self.holds.wait(request, "apply") and self.gap:
            threading.Event().wait(self.gap)
        with db.transaction():
            marked = db.execute(SET_MARK, {"token": token}).fetchone()
            data = db.execute(BLIND, {"value": int(request["value"])}).fetchone()
            assert marked is not None and data is not None
            at = self.log.now()
        value, version = int(data[0]), int(data[1]) - 1
        self.log.record(
            "apply",
            at=at,
            outcome="accepted",
            mark_before=int(marked[0]),
            mark_after=token,
            version_before=version,
            version_after=version + 1,
            **self.fields(request),
        )
        return {"ok": True, "outcome": "accepted", "value": value, "version": version}
