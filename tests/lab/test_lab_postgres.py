"""The lab's store on a real PostgreSQL (started by these tests, stopped after).

Every scripted scenario under every receiver that has a postgres form agrees with the
model's prediction, as on SQLite; the store itself, driven step by step, shows that the
database's conditional statement never lowers the mark under a concurrent fresher write,
while a check and a later write let it go down; a crash keeps a durable mark and loses a
volatile one; the run folder's dump is what the final read found; what cannot run on
PostgreSQL is refused in one line.
"""

from __future__ import annotations

import csv
import ctypes
import ctypes.util
import io
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lab.etcd import Endpoint
from lab.events import EventLog
from lab.experiment import run_scenario
from lab.history import load_history
from lab.history_schema import settings_of
from lab.postgres import Cluster, PostgresServer, missing, running
from lab.postgres_store import PostgresStore, final_row
from lab.processes import ENDED, process_state
from lab.scenarios import SCENARIO_NAMES, predict, scenario
from lab.settings import LabInputError, Settings
from lab.storage import Holds
from lab.sysv_memory import PID_FILE, release_segment, release_segments_under, segment_named_in
from lab.tempdirs import sweep_abandoned
from tests.cli_helpers import run
from tests.lab.test_lab_cleanup import owned_directories, start_cli
from tests.lab.test_lab_scenarios import EXPECTED, check_lesson

pytestmark = pytest.mark.skipif(bool(missing()), reason=missing() or "PostgreSQL is there")

RECEIVERS = ("none", "fenced", "fenced-nonatomic")
"""The receivers that have a postgres form (etcd-txn keeps its data in etcd)."""
GRID = [(name, receiver) for name in SCENARIO_NAMES for receiver in RECEIVERS]
LESSONS = {key: value for key, value in EXPECTED.items() if ("receiver", "etcd-txn") not in key[1]}
"""The lessons of the SQLite scenario test, each of which has a postgres form."""
WAIT_SECONDS = 10.0


def postgres_folders() -> list[Path]:
    """PostgreSQL cluster folders this test process made and did not remove."""
    return [p for p in owned_directories(os.getpid()) if p.name.startswith("fencing-lab-postgres-")]


@pytest.fixture(autouse=True)
def no_cluster_left() -> Iterator[None]:
    """Every test here removes the clusters it made."""
    yield
    assert postgres_folders() == []


def dumped(folder: Path) -> dict[str, int]:
    """The run folder's dump of PostgreSQL's tables: its one row, as numbers."""
    rows = list(csv.DictReader(io.StringIO((folder / "store.csv").read_text())))
    assert len(rows) == 1
    return {name: int(value) for name, value in rows[0].items()}


@pytest.mark.parametrize(("name", "receiver"), GRID, ids=lambda v: str(v))
def test_every_scenario_and_receiver_on_postgres_agrees_with_the_model(
    name: str, receiver: str, etcd: Endpoint, tmp_path: Path
) -> None:
    chosen = scenario(name)
    settings = chosen.settings(receiver=receiver, database="postgres")
    on_sqlite = chosen.settings(receiver=receiver)
    assert predict(chosen, settings).to_dict() == predict(chosen, on_sqlite).to_dict()
    history = tmp_path / "history.json"
    report = run_scenario(etcd, name, settings, history)
    assert report.prediction_agrees, report.text()
    assert not report.refused, report.text()
    assert report.conformance.allowed, report.conformance.verdict()
    assert report.conformance.properties_agree, report.conformance.agreement
    accepted, rejected = predict(chosen, settings).outcomes()
    assert (report.counts.accepted, report.counts.rejected) == (accepted, rejected)
    assert load_history(history).settings.database == "postgres"
    final = next(e for e in report.history.events if e["kind"] == "final-read")["data"]
    kept = dumped(tmp_path / "history-run")
    assert (kept["value"], kept["version"]) == (final["value"], final["version"])
    if settings.keeps_mark and settings.hwm == "durable":
        assert kept["mark"] == final["mark"]


@pytest.mark.parametrize(("name", "flags"), list(LESSONS), ids=lambda v: str(v))
def test_each_lesson_of_the_sqlite_store_holds_on_postgres(
    name: str, flags: tuple[tuple[str, object], ...], etcd: Endpoint
) -> None:
    violated, accepted, rejected = LESSONS[(name, flags)]
    settings = scenario(name).settings(**dict(flags), database="postgres")
    check_lesson(run_scenario(etcd, name, settings), violated, accepted, rejected)


# ----- the store itself, step by step ------------------------------------------------------


@pytest.fixture
def server() -> Iterator[PostgresServer]:
    """A fresh cluster with a server on it."""
    cluster = Cluster.create()
    try:
        with running(cluster) as started:
            yield started
    finally:
        cluster.remove()


def make_store(server: PostgresServer, receiver: str, hwm: str = "durable") -> PostgresStore:
    """A store on the server, its events kept in memory."""
    log = EventLog("storage", time.monotonic())
    return PostgresStore(server.connect_args(), receiver, hwm, 0.0, log, Holds(log))


def write(w: int, token: int, value: int) -> dict[str, Any]:
    """A worker's write request."""
    return {
        "op": "write",
        "request": f"W{w}-{value}",
        "worker": w,
        "token": token,
        "grant": token,
        "value": value,
    }


def mark(server: PostgresServer) -> int:
    """The mark as the database holds it."""
    with psycopg.connect(**server.connect_args()) as db:
        return final_row(db)[2]


def wait_for(ready: Any, what: str) -> None:
    """Poll until `ready()`, failing after `WAIT_SECONDS` (a hang, not a timing claim)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not ready():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def in_background(store: PostgresStore, request: dict[str, Any]) -> tuple[threading.Thread, list]:
    """Send a request from a thread; the answer lands in the list."""
    answers: list[dict[str, Any]] = []
    thread = threading.Thread(target=lambda: answers.append(store.handle(request)), daemon=True)
    thread.start()
    return thread, answers


def lock_waiters(server: PostgresServer) -> int:
    """Sessions of the server waiting for a lock right now."""
    with psycopg.connect(**server.connect_args()) as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        ).fetchone()
        return int(row[0]) if row else 0


def test_fenced_decides_a_stale_write_on_the_fresher_row_it_waited_for(
    server: PostgresServer,
) -> None:
    """A fresher writer (token 7) has raised the mark but not committed; the stale write
    (token 6) arrives, waits on the row inside the database, and is decided on the row the
    fresher one committed: rejected, the mark stays 7. Alone, the same write is accepted."""
    store = make_store(server, "fenced")
    fresher = psycopg.connect(**server.connect_args())
    try:
        fresher.execute("UPDATE mark SET previous = hwm, hwm = 7 WHERE id = 1")
        thread, answers = in_background(store, write(1, 6, 106))
        wait_for(lambda: lock_waiters(server) == 1, "the stale write to wait on the mark row")
        assert thread.is_alive() and answers == []
        fresher.commit()
    finally:
        fresher.close()
    thread.join(WAIT_SECONDS)
    assert answers == [{"ok": True, "outcome": "rejected", "value": 0, "version": 0}]
    decided = [e for e in store.log.kept if e["kind"] == "deliver"]
    assert [(e["outcome"], e["mark_before"], e["mark_after"]) for e in decided] == [
        ("rejected", 7, 7)
    ]
    assert mark(server) == 7
    alone = make_store(server, "fenced")
    alone.admin.execute("UPDATE mark SET hwm = 0")
    assert alone.handle(write(1, 6, 106))["outcome"] == "accepted"
    assert mark(server) == 6
    store.close()
    alone.close()


@pytest.mark.parametrize(
    ("receiver", "phase", "outcome", "marks"),
    [
        ("fenced", "deliver", "rejected", [7]),
        ("fenced-nonatomic", "apply", "accepted", [7, 6]),
    ],
)
def test_a_stale_write_held_before_its_write_lowers_the_mark_only_without_atomicity(
    server: PostgresServer, receiver: str, phase: str, outcome: str, marks: list[int]
) -> None:
    """W1 (token 6) is held at the last moment before its write: for fenced before its one
    statement, for fenced-nonatomic between its SELECT and its UPDATE; W2 (token 7) writes;
    W1 goes on. The conditional statement refuses W1; the check it passed earlier lets it
    set the mark from 7 down to 6."""
    store = make_store(server, receiver)
    store.holds.set(1, phase, "write")
    thread, answers = in_background(store, write(1, 6, 106))
    wait_for(lambda: any(e["kind"] == "hold" for e in store.log.kept), "W1's hold")
    assert store.handle(write(2, 7, 207))["outcome"] == "accepted"
    assert mark(server) == 7
    store.holds.release(1)
    thread.join(WAIT_SECONDS)
    assert answers[0]["outcome"] == outcome
    set_by = [e["mark_after"] for e in store.log.kept if e.get("outcome") == "accepted"]
    assert set_by == marks
    assert mark(server) == marks[-1]
    store.close()


@pytest.mark.parametrize(
    ("hwm", "how", "kept"),
    [("durable", "kill", 5), ("volatile", "kill", 0), ("volatile", "stop", 5)],
)
def test_a_crash_keeps_a_durable_mark_and_loses_a_volatile_one(
    server: PostgresServer, hwm: str, how: str, kept: int
) -> None:
    """A fenced write sets the mark to 5; the server is killed (SIGKILL, as when the store
    is) or stopped cleanly and started again: the data survives, the unlogged mark only a
    clean stop."""
    store = make_store(server, "fenced", hwm)
    assert store.handle(write(1, 5, 105))["outcome"] == "accepted"
    store.close()
    if how == "kill":
        server.kill()
    else:
        server.stop()
    server.start()
    again = make_store(server, "fenced", hwm)
    assert again.start_mark() == kept
    with psycopg.connect(**server.connect_args()) as db:
        assert final_row(db)[:2] == (105, 1)
    again.close()


def _segment_alive(key: int) -> bool:
    """Whether a System V shared-memory segment with this key exists."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    return bool(libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), ctypes.c_int(0)) != -1)


def test_a_killed_server_leaves_no_shared_memory_once_its_cluster_is_removed() -> None:
    """A clean stop removes the server's System V segment itself; after a SIGKILL the
    cluster's removal releases the one its `postmaster.pid` names."""
    cluster = Cluster.create()
    try:
        server = PostgresServer(cluster).start()
        found = segment_named_in(cluster.data / PID_FILE)
        assert found is not None and _segment_alive(found[0])
        server.kill()
        assert _segment_alive(found[0])  # nobody released it: the server could not
    finally:
        cluster.remove()
    assert not _segment_alive(found[0])
    assert not release_segment(*found)  # gone: nothing left to release


def test_a_segment_of_another_key_is_left_alone(tmp_path: Path) -> None:
    """A stale `postmaster.pid` whose key no longer names its id releases nothing."""
    cluster = Cluster.create()
    try:
        with running(cluster):
            key, shmid = segment_named_in(cluster.data / PID_FILE) or (0, 0)
            forged = tmp_path / "data" / PID_FILE
            forged.parent.mkdir()
            lines = ["1", str(tmp_path), "0", "0", "", "localhost", f"{key + 1} {shmid}", "ready"]
            forged.write_text("\n".join(lines) + "\n")
            assert release_segments_under(tmp_path) == 0
            assert _segment_alive(key)  # the running server's segment is untouched
    finally:
        cluster.remove()


# ----- what cannot run on PostgreSQL ---------------------------------------------------------


def test_etcd_txn_has_no_postgres_form(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(LabInputError, match=r"etcd-txn .* no postgres form"):
        Settings(receiver="etcd-txn", database="postgres")
    for args in (
        ["lab", "run", "gap-write", "--receiver", "etcd-txn", "--database", "postgres"],
        ["lab", "random", "--receiver", "fenced,etcd-txn", "--database", "postgres"],
    ):
        code, out, err = run(args, capsys)
        assert (code, out, err.count("\n")) == (2, "", 1), err
        assert "no postgres form" in err


def test_a_machine_without_postgresql_is_told_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("FENCING_LAB_POSTGRES_BIN", str(tmp_path))
    code, out, err = run(["lab", "run", "gap-write", "--database", "postgres"], capsys)
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert "PostgreSQL is not installed" in err and "Traceback" not in err


def test_an_old_history_without_a_database_reads_as_sqlite() -> None:
    old = Settings(receiver="fenced").to_dict()
    del old["database"]
    assert settings_of(old).database == "sqlite"
    with pytest.raises(LabInputError, match="database 'mysql' is not known"):
        settings_of({**old, "database": "mysql"})


def postgres_family(postmaster: int) -> set[int]:
    """The postmaster and the processes it started."""
    found = {postmaster}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            except OSError:
                continue
            if parent == str(postmaster):
                found.add(int(entry.name))
    return found


def test_a_killed_lab_takes_its_postgresql_along(tmp_path: Path) -> None:
    """SIGKILL of the lab: its storage process dies with it, the PostgreSQL server with the
    storage process, the server's own processes after it; the next lab sweeps the folder."""
    process = start_cli(
        "killed-postgres",
        *("run", "paused-worker", "--database", "postgres", "--history", str(tmp_path / "h.json")),
    )
    postmaster: list[int] = []

    def server_ready() -> bool:
        assert process.poll() is None
        for folder in owned_directories(process.pid):
            try:  # initdb's own short-lived server writes the file too, without "ready"
                lines = (folder / "data" / "postmaster.pid").read_text().splitlines()
            except OSError:
                continue
            if len(lines) > 7 and lines[7].strip() == "ready":
                postmaster[:] = [int(lines[0])]
        return bool(postmaster)

    wait_for(server_ready, "the lab's PostgreSQL to be ready")
    (pid_file,) = [
        f / "data" / PID_FILE
        for f in owned_directories(process.pid)
        if (f / "data" / PID_FILE).exists()
    ]
    segment = segment_named_in(pid_file)
    assert segment is not None
    family = postgres_family(postmaster[0])
    assert len(family) > 1
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)
    wait_for(lambda: all(process_state(pid) in ENDED for pid in family), "the server's processes")
    assert _segment_alive(segment[0])
    sweep_abandoned()
    assert owned_directories(process.pid) == []
    assert not _segment_alive(segment[0])  # the sweep released what the killed server left
