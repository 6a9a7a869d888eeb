"""The stores: the resource the lock protects, with the receiver rules of the model.

The storage process (`lab.store_server`) serves one of them on a Unix socket. The data is
one row of a SQLite database in WAL mode (a value and its version, the number of
accepted writes) or, for `etcd-txn`, one key in etcd; with `--database postgres` it is a row
of a real PostgreSQL instead (lab.postgres_store), where each worker has its own connection.
Receivers:

- `none`: every write lands;
- `fenced`: one transaction writes only if the token is at least the mark, and raises it;
- `fenced-nonatomic`: one transaction reads the mark (the check), a second one writes and
  sets the mark to the token (the apply), `gap` seconds or a nemesis hold apart;
- `etcd-txn`: the write is an etcd transaction guarded by the lock key still existing with
  the writer's create revision (the live lease), so the store needs no mark.

The mark is a row of the same database (`durable`, it survives a kill) or a variable of
this process (`volatile`, lost when the nemesis kills it). The nemesis can also *hold* a
worker's next request at the door or between check and apply, and let it go later.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lab.etcd import parse_endpoint
from lab.events import EventLog
from lab.lock import DATA_KEY, LOCK_KEY, guarded_put, read_data

HOLD_LIMIT_SECONDS: Final = 120.0
"""A held request is let go after this long even if nobody says so (no hung process)."""

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS data (id INTEGER PRIMARY KEY CHECK (id = 1), "
    "value INTEGER NOT NULL, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mark (id INTEGER PRIMARY KEY CHECK (id = 1), hwm INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO data VALUES (1, 0, 0)",
    "INSERT OR IGNORE INTO mark VALUES (1, 0)",
)


@dataclass
class Hold:
    """A one-shot hold on a worker's next request of a kind, at a phase."""

    phase: str
    kind: str
    go: threading.Event = field(default_factory=threading.Event)


class Holds:
    """The nemesis's holds, one per worker: set, waited on by a request, released."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.lock = threading.Lock()
        self.pending: dict[int, Hold] = {}

    def set(self, worker: int, phase: str, kind: str) -> None:
        """Hold worker's next request of `kind` (read, write, any) when it reaches `phase`."""
        with self.lock:
            self.pending[worker] = Hold(phase, kind)

    def release(self, worker: int) -> None:
        """Let worker's held request go on (or cancel a hold that has not caught one)."""
        with self.lock:
            hold = self.pending.pop(worker, None)
        if hold is not None:
            hold.go.set()

    def wait(self, request: dict[str, Any], phase: str) -> bool:
        """Block this request here if a hold for its worker, kind and phase is set."""
        worker = int(request["worker"])
        with self.lock:
            hold = self.pending.get(worker)
            if hold is None or hold.phase != phase or hold.kind not in ("any", request["op"]):
                return False
        self.log.record(
            "hold", worker=worker, request=request["request"], phase=phase, op=request["op"]
        )
        hold.go.wait(HOLD_LIMIT_SECONDS)
        self.log.record("unhold", worker=worker, request=request["request"], phase=phase)
        return True


class Store:
    """The receiver: reads and writes with the chosen rule, every decision recorded."""

    def __init__(self, receiver: str, hwm: str, gap: float, log: EventLog, holds: Holds) -> None:
        self.receiver = receiver
        self.volatile = hwm == "volatile"
        self.gap = gap
        self.log = log
        self.holds = holds
        self.lock = threading.Lock()
        self.memory_mark = 0

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one worker request (a read or a write)."""
        self.holds.wait(request, "deliver")
        if request["op"] == "read":
            return self.read(request)
        if self.receiver == "fenced-nonatomic":
            return self.check_then_apply(request)
        return self.write(request)

    def fields(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request's own fields, copied into every event about it."""
        keep = ("request", "worker", "op", "token", "grant", "value", "read_version")
        return {name: request.get(name) for name in keep}

    # The SQLite and etcd stores fill these in.
    def start_mark(self) -> int | None:
        """The mark this incarnation starts with (None for a receiver that keeps none)."""
        raise NotImplementedError

    def read(self, request: dict[str, Any]) -> dict[str, Any]:
        """Serve a read: the value and its version."""
        raise NotImplementedError

    def write(self, request: dict[str, Any]) -> dict[str, Any]:
        """Decide a write atomically: accepted (and applied) or rejected."""
        raise NotImplementedError

    def check_then_apply(self, request: dict[str, Any]) -> dict[str, Any]:
        """Decide a write in two steps: check the token, then apply without checking again."""
        raise NotImplementedError


class SqliteStore(Store):
    """The data and the durable mark in one SQLite database (WAL mode)."""

    def __init__(self, path: Path, *args: Any) -> None:
        super().__init__(*args)
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        for statement in SCHEMA:
            self.db.execute(statement)

    def mark(self) -> int:
        """The high-water mark now (inside a transaction for the durable one)."""
        if self.volatile:
            return self.memory_mark
        return int(self.db.execute("SELECT hwm FROM mark WHERE id = 1").fetchone()[0])

    def set_mark(self, token: int) -> None:
        """Store a new mark."""
        if self.volatile:
            self.memory_mark = token
        else:
            self.db.execute("UPDATE mark SET hwm = ? WHERE id = 1", (token,))

    def data(self) -> tuple[int, int]:
        """The value and its version."""
        value, version = self.db.execute("SELECT value, version FROM data WHERE id = 1").fetchone()
        return int(value), int(version)

    def start_mark(self) -> int | None:
        """The mark this incarnation starts with (None for a receiver that keeps none)."""
        if self.receiver not in ("fenced", "fenced-nonatomic"):
            return None
        with self.lock:
            return self.mark()

    def read(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            value, version = self.data()
            self.log.record(
                "deliver", outcome="read", version_before=version, **self.fields(request)
            )
        return {"ok": True, "outcome": "read", "value": value, "version": version}

    def write(self, request: dict[str, Any]) -> dict[str, Any]:
        token = int(request["token"])
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                value, version = self.data()
                fenced = self.receiver == "fenced"
                before = self.mark() if fenced else None
                accepted = not fenced or token >= int(before or 0)
                after = before
                if accepted:
                    self.db.execute(
                        "UPDATE data SET value = ?, version = version + 1 WHERE id = 1",
                        (int(request["value"]),),
                    )
                    if fenced:
                        self.set_mark(token)
                        after = token
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            outcome = "accepted" if accepted else "rejected"
            self.log.record(
                "deliver",
                outcome=outcome,
                mark_before=before,
                mark_after=after,
                version_before=version,
                version_after=version + 1 if accepted else version,
                **self.fields(request),
            )
        return {"ok": True, "outcome": outcome, "value": value, "version": version}

    def check_then_apply(self, request: dict[str, Any]) -> dict[str, Any]:
        token = int(request["token"])
        with self.lock:
            mark = self.mark()
            passed = token >= mark
            self.log.record("check", passed=passed, mark_before=mark, **self.fields(request))
        if not passed:
            return {"ok": True, "outcome": "rejected"}
        if not self.holds.wait(request, "apply") and self.gap:
            threading.Event().wait(self.gap)
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            value, version = self.data()
            before = self.mark()
            self.db.execute(
                "UPDATE data SET value = ?, version = version + 1 WHERE id = 1",
                (int(request["value"]),),
            )
            self.set_mark(token)
            self.db.execute("COMMIT")
            self.log.record(
                "apply",
                outcome="accepted",
                mark_before=before,
                mark_after=token,
                version_before=version,
                version_after=version + 1,
                **self.fields(request),
            )
        return {"ok": True, "outcome": "accepted", "value": value, "version": version}


class EtcdTxnStore(Store):
    """The data in etcd itself, written in a transaction guarded by the live lock key."""

    def __init__(self, endpoint: str, prefix: str, *args: Any) -> None:
        super().__init__(*args)
        self.client = parse_endpoint(endpoint).client()
        self.lock_key = prefix + LOCK_KEY
        self.data_key = prefix + DATA_KEY

    def start_mark(self) -> int | None:
        return None

    def read(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            data, version, revision = read_data(self.client, self.data_key)
            self.log.record(
                "deliver",
                outcome="read",
                version_before=version,
                etcd_revision=revision,
                etcd_after=True,
                **self.fields(request),
            )
        return {
            "ok": True,
            "outcome": "read",
            "value": int(data.get("value", 0)),
            "version": version,
        }

    def write(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            _, version, _ = read_data(self.client, self.data_key)
            value = {"value": int(request["value"]), "worker": request["worker"]}
            written, revision = guarded_put(
                self.client, self.lock_key, int(request["grant"]), self.data_key, value
            )
            outcome = "accepted" if written else "rejected"
            self.log.record(
                "deliver",
                outcome=outcome,
                version_before=version,
                version_after=version + 1 if written else version,
                etcd_revision=revision,
                etcd_after=not written,
                **self.fields(request),
            )
        return {"ok": True, "outcome": outcome, "version": version}

    def check_then_apply(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.write(request)
