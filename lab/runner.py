"""Running the lab: one run's processes, its watch on the lock, its nemesis, its history.

`LabRun` owns everything one run starts (a temporary directory with the database and the
logs, or with `--database postgres` a PostgreSQL cluster of its own, a key prefix in etcd,
the storage process, the workers, the watch) and removes it
all on the way out, whatever happened: success, an error, a time limit or Ctrl-C. Paused
workers are resumed before they are stopped. While the run goes, every wait also checks
that the processes it needs (etcd, the storage process, the workers) are still there, so
a process that dies stops the run at once with one sentence naming it, and
`LabRun.keep_partial` turns what was recorded up to then into a history marked partial.
`Driver` is what a scripted scenario uses; `run_random` is the Jepsen-style loop with a
seeded nemesis.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import queue
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import etcd3gw
from etcd3gw.exceptions import Etcd3Exception

from lab.cluster import EtcdCluster, cluster_of
from lab.etcd import Endpoint, started_here
from lab.events import Event, EventLog, read_events
from lab.faketime import skewed_environment
from lab.history import History
from lab.lock import (
    DATA_KEY,
    LOCK_KEY,
    current_revision,
    decode,
    delete_prefix,
    grant_lease,
    key_exists,
    lock_keys,
    read_data,
)
from lab.lock_observers import LockApiView, PollingObserver, lock_api_owner, observer_for
from lab.lock_servers import ServiceServer
from lab.nemesis import Fault, Nemesis, refusal, schedule
from lab.postgres import Cluster
from lab.processes import Child, Children, process_state, python_module, start_child
from lab.protocol import StorageUnavailable, request
from lab.settings import LabError, Settings
from lab.tempdirs import make_directory, sweep_abandoned
from model.formats.reading import MAX_HISTORY_BYTES as REPLAY_LIMIT_BYTES

Progress = Callable[[float, str], None]
"""Called with the fraction done (0..1) and a few words on what is happening."""

STEP_SECONDS: Final = 15.0
"""Longest wait for one scripted step (a worker's answer, a hold, a revocation)."""
START_SECONDS: Final = 30.0
"""Longest wait for the storage process or a worker to start."""
SCENARIO_LIMIT_SECONDS: Final = 90.0
"""Wall-clock limit of a scripted scenario."""
RANDOM_GRACE_SECONDS: Final = 30.0
"""How long a randomized run may take beyond its duration (start-up and wind-down)."""
POLL: Final = 0.01
SENTINEL: Final = "lock-end"
"""A key next to the lock key: written at the end, so the watch has caught up once it sees it."""
PROBE_SECONDS: Final = 0.25
"""How often a run asks etcd for its status while it goes."""
PROBE_TIMEOUT_SECONDS: Final = 2.0
PROBE_MISSES: Final = 3
"""Unanswered status requests in a row after which etcd counts as gone (an etcd the lab
started is also watched as a process, which is seen at once)."""
DRAIN_SECONDS: Final = 1.0
"""How long a stopped run waits for the watch to report the last lock changes."""
HEADER_ALLOWANCE_BYTES: Final = 100_000
"""Room kept in a history for what is not an event (settings, etcd, the model's prediction)
and for what is recorded between two measurements."""
SIZE_CHECK_SECONDS: Final = 0.2
"""How often a run adds up what it has recorded."""
PROBE_KEY: Final = "probe"
"""A key of the run (outside the watched lock keys) on a probe lease whose revocation is timed."""
PROBE_LEASE_LIMIT_SECONDS: Final = 10.0
PROBE_POLL_SECONDS: Final = 0.05
"""How often a probe lease's key is looked for (a late look only makes the allowance larger)."""
"""How long past its TTL the probe lease is watched before the measurement is given up."""
STOP_SEEN_SECONDS: Final = 1.0
"""How long a pause waits to see the worker stopped."""
MEMBER_SEEN_SECONDS: Final = 5.0
"""How long the first etcd member is asked whether it sees a killed member gone."""


def history_budget() -> int:
    """The most event bytes a run records: a history `fencing replay` reads, less room for
    the rest of the file. (Each process writes its events with blanks after commas and
    colons, which the history file leaves out, so the bytes on disk overstate it.)"""
    return REPLAY_LIMIT_BYTES - HEADER_ALLOWANCE_BYTES


class LabTimeout(LabError):
    """A lab run passed its wall-clock limit."""


class LabProcessDied(LabError):
    """A process the run needs (etcd, the storage process, a worker) ended while it ran."""


class LabHistoryFull(LabError):
    """A run recorded as much as a history may hold (see `history_budget`)."""


class Interrupted(KeyboardInterrupt):
    """The lab was told to stop by a signal (SIGINT from Ctrl-C, or SIGTERM)."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class LabStopped(LabError):
    """A run that stopped before its end; what it had recorded is kept as a partial history."""

    def __init__(
        self, reason: str, history: History, path: Path | None, signum: int | None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.history = history
        self.path = path
        self.signum = signum
        self.finished: list[Path] = []
        """Histories of runs that went to their end before this one (several receivers)."""

    def kept(self) -> str:
        """Where the partial history went, in words."""
        events = f"{len(self.history.events):,} events, marked partial"
        if self.path is None:
            return f"the partial history ({events}) was kept in memory only"
        return f"the partial history ({events}) is in {self.path}"


def stop_reason(error: BaseException, at: float, etcd_url: str) -> str:
    """Why a run stopped early, in words, for the partial history and the message."""
    if isinstance(error, KeyboardInterrupt):
        signum = error.signum if isinstance(error, Interrupted) else signal.SIGINT
        return f"interrupted by {signal.Signals(signum).name} {at:.1f} s into the run"
    if isinstance(error, LabError):
        return str(error)
    if isinstance(error, Etcd3Exception):
        return (
            f"etcd at {etcd_url} failed a request ({type(error).__name__}) {at:.1f} s into the run"
        )
    return f"stopped {at:.1f} s into the run by an internal error ({type(error).__name__})"


class EtcdProbe:
    """A thread asking etcd for its status every `PROBE_SECONDS`, counting misses in a row,
    and recording each raft term its answers show (`leader`: a new leader was elected, and
    a new leader renews every lease by its TTL)."""

    def __init__(self, endpoint: Endpoint, record: Callable[..., object] | None = None) -> None:
        self.client = endpoint.client(timeout=PROBE_TIMEOUT_SECONDS)
        self.record = record
        self.term: int | None = None
        self.misses = 0
        self.last_error = ""
        self.slowest = 0.0
        """The longest a status request that was answered took (seconds)."""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._ask, name="fencing-lab-probe", daemon=True)
        self.thread.start()

    def _ask(self) -> None:
        """Probe until stopped."""
        while not self.done.wait(PROBE_SECONDS):
            try:
                asked = time.monotonic()
                status = self.client.status()
                self.slowest = max(self.slowest, time.monotonic() - asked)
                self.misses = 0
                self._term(status)
            except Exception as error:  # etcd3gw raises several kinds for a gone server
                self.last_error = type(error).__name__
                self.misses += 1

    def _term(self, status: Any) -> None:
        """Record the raft term a status answer shows, when it is a new one."""
        raw = status.get("raftTerm") if isinstance(status, dict) else None
        term = int(raw) if isinstance(raw, str | int) and str(raw).isdigit() else None
        if term is not None and term != self.term and self.record is not None:
            self.term = term
            self.record("leader", term=term)

    def silent(self) -> bool:
        """Whether etcd has missed `PROBE_MISSES` status requests in a row."""
        return self.misses >= PROBE_MISSES

    def stop(self) -> None:
        """Stop probing."""
        self.done.set()


def _never(_: float, __: str) -> None:
    """No progress report."""


class LabRun:
    """Everything one run starts, and the history it records."""

    def __init__(
        self,
        endpoint: Endpoint,
        settings: Settings,
        scenario: str,
        limit_seconds: float,
        progress: Progress | None = None,
        service: ServiceServer | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.service = service
        """The lock service the lab started besides etcd (ZooKeeper, Redis), if any."""
        self.observer: PollingObserver | None = None
        self.lock_view: LockApiView | None = None
        self.settings = settings
        self.scenario = scenario
        self.progress = progress or _never
        self.run_id = uuid.uuid4().hex[:12]
        self.prefix = f"/fencing-lab/{self.run_id}/"
        self.t0 = time.monotonic()
        self.deadline = self.t0 + limit_seconds
        self.started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
        self.log = EventLog("lab", self.t0)
        self.children = Children()
        self.workers: dict[int, Child] = {}
        self.answers: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.storage: Child | None = None
        self.incarnation = 0
        sweep_abandoned()
        self.directory = make_directory("run")
        self.client = endpoint.client()
        self.watcher: etcd3gw.watch.Watcher | None = None
        self.watch_done = threading.Event()
        self.commands = 0
        self.finished = 0.0
        self.etcd_process = started_here(endpoint)
        self.probe: EtcdProbe | None = None
        self.recorded = _RecordedBytes(self)
        self.revocation: float | None = None
        """How long after its TTL (from asking for it) etcd revoked the latest of the run's
        probe leases."""
        self.lease_probe_done = threading.Event()
        """Set when the run's processes have stopped: no more probe leases."""
        self.postgres: Cluster | None = None
        """The run's PostgreSQL cluster (with `--database postgres`)."""
        self.may_finish = False
        """Whether a worker may exit normally before the run ends (a randomized run's worker
        that retired), whichever wait notices it."""
        self.crashed: set[int] = set()
        """Workers killed on purpose, by a scenario or the nemesis (not missed by
        `check_processes`)."""
        self.worker_env: dict[int, dict[str, str]] = {}
        """Environment variables added to a worker's process (a skewed clock)."""
        self.faults: tuple[Fault, ...] = ()
        """The nemesis's schedule (a randomized run's), kept in the history."""
        self.faults_given = False
        """Whether the schedule was given by the caller rather than drawn from the seed."""
        self.cluster: EtcdCluster | None = cluster_of(endpoint) if settings.members > 1 else None

    # ----- set-up and clean-up -----------------------------------------------------------

    def __enter__(self) -> LabRun:
        try:
            self.probe = EtcdProbe(self.endpoint, self.log.record)
            threading.Thread(
                target=self._measure_revocation, name="fencing-lab-lease-probe", daemon=True
            ).start()
            self.start_watch()
            self.start_observer()
            if self.settings.database == "postgres":
                self.postgres = Cluster.create()
            self.start_storage()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop every process (paused ones resumed first), the watch; remove keys and files."""
        self.lease_probe_done.set()
        self.children.stop_all()
        if self.observer is not None:
            self.observer.close()
        if self.probe is not None:
            self.probe.stop()
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        with contextlib.suppress(Exception):
            delete_prefix(self.client, self.prefix)
        if self.postgres is not None:
            self.postgres.remove()
        shutil.rmtree(self.directory, ignore_errors=True)

    def remaining(self) -> float:
        """Seconds left before the run's wall-clock limit (raises once it has passed)."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise LabTimeout(
                f"the run passed its time limit of {self.deadline - self.t0:.0f} s and was stopped"
            )
        return left

    def wait_until(
        self,
        ready: Callable[[], bool],
        what: str,
        seconds: float = STEP_SECONDS,
        check: bool = True,
    ) -> None:
        """Poll until `ready()`, or raise a timeout naming `what` was awaited; with `check`,
        stop at once if a process the run needs has died."""
        limit = time.monotonic() + min(seconds, self.remaining())
        while not ready():
            if check:
                self.check_processes()
            if time.monotonic() > limit:
                self.remaining()
                raise LabTimeout(f"gave up waiting for {what} after {seconds:g} s")
            time.sleep(POLL)

    # ----- the processes the run needs -----------------------------------------------------

    def check_processes(self, finished_ok: bool = False) -> None:
        """Raise `LabProcessDied` naming the first needed process that has ended, or
        `LabHistoryFull`.

        etcd counts as gone when the process the lab started has ended or when it has not
        answered `PROBE_MISSES` status requests in a row; the storage process and the
        workers when their process has ended (with `finished_ok`, a worker that exited
        normally has finished its loop and is not missed). Raise `LabHistoryFull` once the
        run has recorded as much as a replayable history may hold.
        """
        at = f"{self.log.now():.1f} s into the run"
        etcd = self.etcd_process
        if etcd is not None and not etcd.alive():
            raise LabProcessDied(f"etcd (pid {etcd.pid}) {etcd.ending()}, seen {at}")
        if self.probe is not None and self.probe.silent():
            raise LabProcessDied(
                f"etcd at {self.endpoint.url} stopped answering ({self.probe.misses} status "
                f"requests in a row failed: {self.probe.last_error}), seen {at}"
            )
        service = self.service
        if service is not None and service.child is not None and not service.alive():
            raise LabProcessDied(f"{service.service} {service.child.ending()}, seen {at}")
        if self.storage is not None and not self.storage.alive():
            raise LabProcessDied(
                f"the storage process (pid {self.storage.pid}) {self.storage.ending()}, seen "
                f"{at}{self._said(self.storage, 'storage')}"
            )
        for w, child in self.workers.items():
            finished = finished_ok or self.may_finish
            if child.alive() or (finished and child.process.returncode == 0):
                continue
            if w in self.crashed:
                continue
            raise LabProcessDied(
                f"worker W{w} (pid {child.pid}) {child.ending()}, seen {at}"
                f"{self._said(child, f'w{w}')}"
            )
        recorded, budget = self.recorded.total(), history_budget()
        if recorded >= budget:
            raise LabHistoryFull(
                f"the run had recorded {recorded:,} bytes of events {at}, as much as a history "
                f"may hold to be replayed (at most {REPLAY_LIMIT_BYTES:,} bytes), so it was "
                "stopped there"
            )

    def _said(self, child: Child, name: str) -> str:
        """` (its last error line)` for a process that exited with a status, else ''."""
        code = child.process.returncode
        return f" ({self.stderr_of(name)})" if code is not None and code > 0 else ""

    def keep_partial(self, reason: str, prediction: dict[str, Any] | None = None) -> History:
        """Stop every process now and return the history recorded so far, marked partial.

        The watch is given `DRAIN_SECONDS` to report the last lock changes (when etcd still
        answers); what a process wrote before it was stopped is kept, a line it was cut off
        in the middle of is skipped.
        """
        for w in self.workers:  # recorded, so no step it takes after SIGCONT looks impossible
            with contextlib.suppress(Exception):
                self.resume(w)
        self.children.stop_all()
        self.finished = time.monotonic()
        self.lease_probe_done.set()
        if self.etcd_process is None or self.etcd_process.alive():
            with contextlib.suppress(Exception):
                self.drain_watch(DRAIN_SECONDS)
        with contextlib.suppress(Exception):
            self.final_read()
        return self.history(prediction, partial=reason)

    # ----- measurements and final reads ---------------------------------------------------

    def _measure_revocation(self) -> None:
        """Probe leases of the run's TTL, one after another for as long as the run goes,
        each with a key on it: how late etcd revoked the latest of them (the lease
        allowance of the run's checks, measured while its own load was on)."""
        client = self.endpoint.client()
        key = self.prefix + PROBE_KEY
        while not self.watch_done.is_set() and not self.lease_probe_done.is_set():
            late = self._probe_lease(client, key)
            if late is None:
                return
            self.revocation = max(late, self.revocation or 0.0)

    def _probe_lease(self, client: Any, key: str) -> float | None:
        """One probe lease: how long past its TTL its key was seen gone (None: not seen)."""
        with contextlib.suppress(Exception):
            asked = time.monotonic()
            lease, ttl = grant_lease(client, self.settings.ttl)
            client.put(key, "probe", lease=etcd3gw.Lease(lease, client))
            limit = asked + ttl + PROBE_LEASE_LIMIT_SECONDS
            while time.monotonic() < limit and not self.lease_probe_done.is_set():
                if not key_exists(client, key):
                    return max(0.0, time.monotonic() - asked - ttl)
                time.sleep(PROBE_POLL_SECONDS)
        return None

    def measured(self) -> dict[str, float]:
        """What the run measured: the slowest status request to etcd, the probe lease's
        revocation, the slowest look of a polled lock service's observer."""
        found: dict[str, float] = {}
        if self.probe is not None and self.probe.slowest:
            found["request_seconds"] = round(self.probe.slowest, 6)
        if self.revocation is not None:
            found["revocation_seconds"] = round(self.revocation, 6)
        if self.observer is not None and self.observer.slowest:
            found["observer_seconds"] = round(self.observer.slowest, 6)
        return found

    @property
    def final_database(self) -> Path:
        """The copy of the database the final read made (after the store stopped): the
        SQLite file, or the CSV dump of PostgreSQL's tables."""
        suffix = "csv" if self.settings.database == "postgres" else "sqlite"
        return self.directory / f"store-final.{suffix}"

    def etcd_answers(self) -> bool:
        """Whether etcd is still there (its process, if the lab started it, and its answers)."""
        process = self.etcd_process
        alive = process is None or process.alive()
        return alive and not (self.probe is not None and self.probe.silent())

    def final_read(self) -> None:
        """Read the data row (and the mark) and the lock keys once every process has stopped,
        and record what was found (None for what could not be read, or an etcd that is gone)."""
        answers = self.etcd_answers()
        data = self._read_data() if answers or self.settings.receiver != "etcd-txn" else None
        locks = None
        if self.observer is not None:
            self.observer.stop()
            if self.service is None or self.service.alive():
                with contextlib.suppress(Exception):
                    locks = self.observer.final_locks()
        elif answers and self.lock_view is not None:
            with contextlib.suppress(Exception):
                locks = lock_api_owner(self.client, self.prefix)
        elif answers:
            with contextlib.suppress(Exception):
                locks = lock_keys(self.client, self.prefix + LOCK_KEY)
        self.log.record("final-read", data=data, locks=locks, watch=self.watch_done.is_set())

    def _read_data(self) -> dict[str, Any] | None:
        """The data's value and version, and the durable mark (None without one)."""
        s = self.settings
        if s.receiver == "etcd-txn":
            with contextlib.suppress(Exception):
                value, version, _ = read_data(self.client, self.prefix + DATA_KEY)
                number = value.get("value")
                return {"value": number if isinstance(number, int) else None, "version": version}
            return None
        if self.postgres is not None:
            return self._read_postgres(self.postgres)
        database = self.directory / "store.sqlite"
        if not database.is_file():
            return None
        with (
            contextlib.suppress(sqlite3.Error),
            contextlib.closing(sqlite3.connect(database)) as db,
        ):
            value, version = db.execute("SELECT value, version FROM data WHERE id = 1").fetchone()
            (mark,) = db.execute("SELECT hwm FROM mark WHERE id = 1").fetchone()
            with contextlib.closing(sqlite3.connect(self.final_database)) as copy:
                db.backup(copy)
            durable = s.keeps_mark and s.hwm == "durable"
            return {
                "value": int(value),
                "version": int(version),
                "mark": int(mark) if durable else None,
            }
        return None

    def _read_postgres(self, cluster: Cluster) -> dict[str, Any] | None:
        """The data row and the durable mark from the run's PostgreSQL, started again on its
        cluster once the store has stopped; the tables dumped beside (None if it cannot)."""
        import psycopg

        from lab.postgres import running
        from lab.postgres_store import dump, final_row

        s = self.settings
        with (
            contextlib.suppress(psycopg.Error, LabError, OSError),
            running(cluster) as server,
            psycopg.connect(**server.connect_args(), autocommit=True) as db,
        ):
            value, version, mark = final_row(db)
            self.final_database.write_bytes(dump(db))
            durable = s.keeps_mark and s.hwm == "durable"
            return {"value": value, "version": version, "mark": mark if durable else None}
        return None

    def evidence_logs(self) -> list[Path]:
        """The logs of the run's processes: each worker's and storage process's standard
        error, and etcd's log when the lab started etcd."""
        logs = sorted(self.directory.glob("*.err"))
        etcd = self.etcd_process
        if etcd is not None:
            for arg in etcd.process.args if isinstance(etcd.process.args, list) else []:
                if str(arg).startswith("--data-dir="):
                    logs.append(Path(str(arg).split("=", 1)[1]).parent / "etcd.log")
        if self.postgres is not None:
            logs.append(self.postgres.log)
        return logs

    # ----- the watch on the lock key -------------------------------------------------------

    def start_watch(self) -> None:
        """Watch the lock key (and the end sentinel) from the current revision on."""
        lock = self.prefix + LOCK_KEY
        try:
            start = current_revision(self.client, lock) + 1
            self.watcher = etcd3gw.watch.Watcher(
                self.client,
                lock,
                self.on_lock_event,
                start_revision=start,
                prev_kv=True,
                range_end=self.prefix + "lock\xff",
            )
        except Etcd3Exception as error:
            raise LabError(
                f"etcd at {self.endpoint.url} did not answer when the run started "
                f"({type(error).__name__})"
            ) from None

    def start_observer(self) -> None:
        """Start the view of the lock for a service other than the etcd recipe."""
        service = self.settings.lock_service
        if service == "etcd-lock-api":
            self.lock_view = LockApiView(self.endpoint.client(), self.prefix, self.log.record)
        elif self.service is not None and self.service.address is not None:
            url = self.service.address.url
            self.observer = observer_for(service, url, self.prefix, self.log.record, self.log.now)
            if self.observer is not None:
                self.observer.start()

    def on_lock_event(self, event: Any) -> None:
        """Record a change of the lock key as the watch reports it."""
        at = self.log.now()
        kv = event["kv"]
        key = kv["key"].decode() if isinstance(kv["key"], bytes) else str(kv["key"])
        if key.endswith(SENTINEL):
            self.watch_done.set()
            return
        if self.lock_view is not None:
            self.lock_view.on_event(event, at)
            return
        revision = int(kv["mod_revision"])
        if event.get("type") == "DELETE":
            previous = event.get("prev_kv") or {}
            self.log.record(
                "lock-delete",
                at=at,
                revision=revision,
                grant=int(previous.get("create_revision", 0)),
                holder=decode(previous.get("value", "")),
            )
            return
        value = kv.get("value", b"")
        self.log.record(
            "lock-put",
            at=at,
            revision=revision,
            create_revision=int(kv.get("create_revision", 0)),
            version=int(kv.get("version", 0)),
            lease=int(kv.get("lease", 0)),
            holder=value.decode() if isinstance(value, bytes) else str(value),
        )

    def drain_watch(self, seconds: float = 5.0) -> None:
        """Write the sentinel and wait until the watch has reported it (and all before it)."""
        try:
            self.client.put(self.prefix + SENTINEL, "end")
        except Etcd3Exception as error:
            self.check_processes(finished_ok=True)
            raise LabProcessDied(
                f"etcd at {self.endpoint.url} did not take the run's last write "
                f"({type(error).__name__}), seen {self.log.now():.1f} s into the run"
            ) from None
        with contextlib.suppress(LabTimeout):
            self.wait_until(self.watch_done.is_set, "the watch on the lock key", seconds, False)

    def holder(self) -> int:
        """The worker whose key is the lock key now, as the watch reports it (0: nobody)."""
        for event in reversed(list(self.log.kept)):
            if event["kind"] == "lock-delete":
                return 0
            if event["kind"] == "lock-put":
                text = str(event.get("holder", ""))
                return int(text[1:]) if text[1:].isdigit() else 0
        return 0

    def lock_events(self, kind: str) -> list[Event]:
        """The watch's records of one kind so far."""
        return [e for e in list(self.log.kept) if e["kind"] == kind]

    # ----- the storage process ---------------------------------------------------------------

    @property
    def socket(self) -> Path:
        """The storage process's Unix socket."""
        return self.directory / "storage.sock"

    def start_storage(self) -> None:
        """Start (or start again) the storage process and wait until it answers."""
        self.incarnation += 1
        self.socket.unlink(missing_ok=True)
        s = self.settings
        argv = python_module(
            "lab.store_server",
            f"--socket={self.socket}",
            f"--db={self.directory / 'store.sqlite'}",
            f"--events={self.directory / 'storage.jsonl'}",
            f"--t0={self.t0!r}",
            f"--receiver={s.receiver}",
            f"--hwm={s.hwm}",
            f"--gap={s.gap}",
            f"--incarnation={self.incarnation}",
            f"--etcd={self.endpoint.url}",
            f"--prefix={self.prefix}",
            f"--database={s.database}",
            *([f"--pgdata={self.postgres.directory}"] if self.postgres is not None else []),
        )
        log = open(self.directory / f"storage-{self.incarnation}.err", "w")  # noqa: SIM115
        self.storage = self.children.add(start_child("storage", argv, stderr=log))
        log.close()

        def answers() -> bool:
            if self.storage is not None and not self.storage.alive():
                raise LabProcessDied(
                    f"the storage process {self.storage.ending()} as it started "
                    f"({self.stderr_of('storage')})"
                )
            try:
                return bool(request(self.socket, {"op": "ping"}, 1.0).get("ok"))
            except StorageUnavailable:
                return False

        self.wait_until(answers, "the storage process to start", START_SECONDS)

    def stderr_of(self, name: str) -> str:
        """The last line a child wrote to its error log (for an error message)."""
        files = sorted(self.directory.glob(f"{name}*.err"))
        lines = files[-1].read_text(errors="replace").strip().splitlines() if files else []
        return lines[-1][:200] if lines else "no message"

    def control(self, message: dict[str, Any]) -> None:
        """Send the storage process a nemesis command (hold, unhold)."""
        try:
            answer = request(self.socket, message, STEP_SECONDS)
        except StorageUnavailable as error:
            self.check_processes()
            raise LabError(f"the storage process did not take {message['op']}: {error}") from None
        if not answer.get("ok"):
            raise LabError(f"the storage process refused {message['op']}: {answer.get('error')}")

    def restart_storage(self, **fault: Any) -> None:
        """The nemesis kills the storage process (SIGKILL) and starts a new one.

        Recorded once the process is gone (so every decision it recorded comes before),
        with the time the kill was asked for and the process it was sent to; `fault` names
        the nemesis's fault, in a randomized run."""
        assert self.storage is not None
        asked, pid = self.log.now(), self.storage.pid
        try:
            self.storage.kill()
        finally:
            self.log.record(
                "storage-kill",
                incarnation=self.incarnation,
                pid=pid,
                asked=round(asked, 6),
                **fault,
            )
        self.start_storage()

    # ----- workers -------------------------------------------------------------------------------

    def start_workers(self, randomized: bool = False) -> None:
        """Start one process per worker and wait until each is ready."""
        s = self.settings
        for w in range(1, s.workers + 1):
            argv = python_module(
                "lab.worker",
                f"--worker={w}",
                f"--etcd={self.worker_endpoint(w).url}",
                f"--lock-service={s.lock_service}",
                f"--service={self._service_fields().get('lock_service', '')}",
                f"--prefix={self.prefix}",
                f"--socket={self.socket}",
                f"--events={self.directory / f'w{w}.jsonl'}",
                f"--t0={self.t0!r}",
                f"--ttl={s.ttl}",
                f"--token={s.token}",
                f"--workload={s.workload}",
                f"--expiry={s.expiry}",
                f"--keepalive={s.keepalive!r}",
                f"--writes={s.writes}",
                f"--seed={s.seed * 100 + w}",
                *(["--worker-check"] if s.worker_check else []),
                *(["--wait-go"] if randomized else []),
            )
            log = open(self.directory / f"w{w}.err", "w")  # noqa: SIM115
            child = start_child(
                f"W{w}",
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                extra_env=self.worker_env.get(w),
            )
            log.close()
            self.workers[w] = self.children.add(child)
            self.answers[w] = queue.Queue()
            threading.Thread(target=self._read_answers, args=(w, child), daemon=True).start()
        for w in self.workers:
            self.answer(w, 0, START_SECONDS)

    def worker_endpoint(self, w: int) -> Endpoint:
        """The etcd member worker w talks to: spread over the cluster's members."""
        if self.cluster is None:
            return self.endpoint
        return self.cluster.members[(w - 1) % len(self.cluster.members)].client

    def _read_answers(self, w: int, child: Child) -> None:
        """Move each line a worker prints into its answer queue."""
        assert child.process.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            for line in child.process.stdout:
                with contextlib.suppress(json.JSONDecodeError):
                    self.answers[w].put(json.loads(line))

    def tell(self, w: int, command: dict[str, Any]) -> int:
        """Send a worker a command line (a paused worker reads it when it resumes)."""
        self.commands += 1
        stdin = self.workers[w].process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps({"id": self.commands, **command}) + "\n")
            stdin.flush()
        except (OSError, ValueError):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.workers[w].process.wait(timeout=STEP_SECONDS)
            self.check_processes()
            raise LabError(f"W{w} no longer reads its commands") from None
        return self.commands

    def answer(self, w: int, ticket: int, seconds: float = STEP_SECONDS) -> str:
        """Wait for the worker's answer to command `ticket`."""
        limit = time.monotonic() + min(seconds, self.remaining())
        while True:
            try:
                reply = self.answers[w].get(timeout=max(0.0, min(0.1, limit - time.monotonic())))
            except queue.Empty:
                self.check_processes()
                if time.monotonic() > limit:
                    self.remaining()
                    raise LabTimeout(f"W{w} did not answer within {seconds:g} s") from None
                continue
            if reply.get("id") == ticket:
                return str(reply.get("result"))

    # ----- the nemesis ---------------------------------------------------------------------------

    def pause(self, w: int, at: float | None = None, **fault: Any) -> None:
        """SIGSTOP worker w, recorded with the time it was asked for (`at`: the nemesis's
        own time, by default now) and the time the worker was seen stopped (from then until
        it is resumed it can record nothing); `fault` names the nemesis's fault."""
        at = self.log.now() if at is None else at
        child = self.workers[w]
        seen: dict[str, float] = {}
        try:  # recorded even when an interrupt arrives while it waits
            if child.pause():
                limit = time.monotonic() + STOP_SEEN_SECONDS
                while process_state(child.pid) not in ("T", "t", ""):
                    if time.monotonic() > limit:
                        break
                    time.sleep(0.001)
                seen["stopped_at"] = round(self.log.now(), 6)
        finally:
            self.log.record("pause", at=at, worker=w, **seen, **fault)

    def resume(self, w: int, at: float | None = None, **fault: Any) -> None:
        """SIGCONT worker w (recorded first, at the nemesis's own time `at` if given)."""
        if self.workers[w].paused:
            self.log.record("resume", at=at, worker=w, **fault)
            self.workers[w].resume()

    def crash(self, w: int, **fault: Any) -> None:
        """SIGKILL worker w for good, even while it is stopped (a scenario's crash or the
        nemesis's): it stops for ever, its keepalives with it (the model's Crash(w)), and
        the run goes on without it.

        Recorded as the runner event `crash` once the process is gone, so everything the
        worker recorded comes before it; `asked` is when the kill was sent; `fault` names
        the nemesis's fault."""
        child = self.workers[w]
        self.crashed.add(w)
        asked = self.log.now()
        try:
            with contextlib.suppress(ProcessLookupError):
                child.process.kill()
            child.process.wait()
            child.paused = False
        finally:
            self.log.record("crash", worker=w, pid=child.pid, asked=round(asked, 6), **fault)

    def watch_member(self, member: int, fault: int) -> None:
        """After the nemesis killed an etcd member, ask the first member (never touched)
        until it sees the killed one gone from its peers, and record when it did
        (`member-seen`): the kill as another member of the cluster witnessed it."""
        cluster = self.cluster
        if cluster is None:
            return

        def watch() -> None:
            limit = time.monotonic() + MEMBER_SEEN_SECONDS
            while time.monotonic() < limit:
                if cluster.peer_active(1, member) is False:
                    self.log.record("member-seen", member=member, by=1, fault=fault)
                    return
                time.sleep(POLL)

        threading.Thread(target=watch, name="fencing-lab-member-seen", daemon=True).start()

    # ----- the history ---------------------------------------------------------------------------

    def events(self) -> list[Event]:
        """Every event recorded so far by every process, by time."""
        found = list(self.log.kept)
        for path in sorted(self.directory.glob("*.jsonl")):
            found.extend(read_events(path))
        return sorted(found, key=lambda e: e["t"])

    def history(self, prediction: dict[str, Any] | None = None, partial: str = "") -> History:
        """The history of this run (call after the processes have stopped); `partial` says
        why it ended early ('' for a run that went to its end)."""
        version = ""
        with contextlib.suppress(Exception):
            version = str(
                self.client.session.get(f"{self.endpoint.url}/version", timeout=2)
                .json()
                .get("etcdserver", "")
            )
        return History(
            scenario=self.scenario,
            settings=self.settings,
            events=tuple(self.events()),
            etcd={
                "endpoint": self.endpoint.url,
                "version": version,
                "prefix": self.prefix,
                **self._service_fields(),
            },
            started=self.started_at,
            seconds=(self.finished or time.monotonic()) - self.t0,
            prediction=prediction,
            partial=partial,
            measured=self.measured(),
            nemesis=self.faults,
            nemesis_given=self.faults_given,
        )

    def _service_fields(self) -> dict[str, Any]:
        """Where the run's lock service was, when it is not etcd."""
        address = self.service.address if self.service is not None else None
        return {"lock_service": address.url} if address is not None else {}

    def wind_down(self) -> None:
        """Resume paused workers, let the workers exit, catch the watch up, stop the store."""
        for w in self.workers:
            self.resume(w)
        for w, child in self.workers.items():
            if child.alive():
                with contextlib.suppress(LabError):
                    self.tell(w, {"do": "exit"})
        for child in self.workers.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(0.1, min(10.0, self.deadline - time.monotonic())))
        self.check_processes(finished_ok=True)
        self.drain_watch()
        self.finished = time.monotonic()
        self.lease_probe_done.set()
        self.children.stop_all()
        self.final_read()


class Driver:
    """What a scripted scenario does to a run, step by step, each step waited for."""

    def __init__(self, run: LabRun, steps: int) -> None:
        self.run = run
        self.steps = max(1, steps)
        self.done = 0
        self.holds_seen: dict[int, int] = {}
        self.stalled: set[int] = set()
        """Workers paused only so that their ZooKeeper session could expire."""

    def _step(self, words: str) -> None:
        """Report progress: one more step done."""
        self.done += 1
        self.run.progress(min(0.95, self.done / self.steps), words)

    def acquire(self, w: int) -> None:
        """W takes the lock (the key is free: the previous lease ended or was released)."""
        result = self.run.answer(w, self.run.tell(w, {"do": "acquire", "timeout": STEP_SECONDS}))
        if result != "acquired":
            raise LabError(f"W{w} could not take the lock: {result}")
        self._step(f"W{w} holds the lock")

    def write(self, w: int) -> str:
        """W writes once (read, then write, in read-modify-write) and gets the outcome."""
        result = self.run.answer(w, self.run.tell(w, {"do": "write"}))
        self._step(f"W{w}'s write: {result}")
        return result

    def release(self, w: int) -> str:
        """W releases the lock if it still holds its grant."""
        self._unstall(w)
        result = self.run.answer(w, self.run.tell(w, {"do": "release"}))
        self._step(f"W{w}: {result}")
        return result

    def try_acquire(self, w: int, seconds: float) -> bool:
        """W asks for the lock for at most `seconds`; whether it got it (a lock that is not
        freed is an outcome here, not an error)."""
        ticket = self.run.tell(w, {"do": "acquire", "timeout": seconds})
        got = self.run.answer(w, ticket, seconds + STEP_SECONDS) == "acquired"
        self._step(f"W{w} {'holds the lock' if got else f'did not get the lock in {seconds:g} s'}")
        return got

    def hold_for(self, seconds: float) -> None:
        """Let time pass while the holder keeps its lock (and its keepalives run)."""
        self._sleep(seconds)
        self._step(f"{seconds:g} s passed")

    def _sleep(self, seconds: float) -> None:
        """Sleep, watching the processes the run needs."""
        until = time.monotonic() + seconds
        while (left := until - time.monotonic()) > 0:
            self.run.remaining()
            self.run.check_processes()
            time.sleep(min(POLL * 5, left))

    def crash(self, w: int) -> None:
        """The nemesis kills W (SIGKILL)."""
        self.run.crash(w)
        self._step(f"W{w} killed")

    def write_later(self, w: int) -> int:
        """Tell W to write without waiting (it is paused, or its request will be held)."""
        return self.run.tell(w, {"do": "write"})

    def outcome(self, w: int, ticket: int) -> str:
        """Wait for the outcome of a write told earlier."""
        self._unstall(w)
        result = self.run.answer(w, ticket)
        self._step(f"W{w}'s late write: {result}")
        return result

    def pause(self, w: int) -> None:
        """The nemesis pauses W (SIGSTOP)."""
        self.run.pause(w)
        self._step(f"W{w} paused")

    def resume(self, w: int) -> None:
        """The nemesis resumes W (SIGCONT)."""
        self.run.resume(w)
        self._step(f"W{w} resumed")

    def hold(self, w: int, phase: str = "deliver", kind: str = "write") -> None:
        """The store will hold W's next request of `kind` at `phase` (deliver or apply)."""
        self.run.control({"op": "hold", "worker": w, "phase": phase, "kind": kind})

    def wait_held(self, w: int) -> None:
        """Wait until the store holds W's request."""
        seen = self.holds_seen.get(w, 0)

        def held() -> bool:
            events = read_events(self.run.directory / "storage.jsonl")
            return sum(1 for e in events if e["kind"] == "hold" and e.get("worker") == w) > seen

        self.run.wait_until(held, f"the store to hold W{w}'s request")
        self.holds_seen[w] = seen + 1
        self._step(f"W{w}'s request held in flight")

    def unhold(self, w: int) -> None:
        """Let W's held request go on."""
        self.run.control({"op": "unhold", "worker": w})

    def _unstall(self, w: int) -> None:
        """Resume a worker paused only for its session to expire."""
        if w in self.stalled:
            self.stalled.discard(w)
            self.run.resume(w)

    def wait_lease_end(self, w: int) -> None:
        """Wait until the service has deleted W's lock (its lease expired and was revoked).

        A ZooKeeper lock ends only when its holder's session expires, and kazoo keeps the
        session alive from a thread of its own while the worker waits for the store; so a
        worker that is not paused is paused here (as a long GC pause would) until it is
        told to go on."""
        if self.run.settings.lock_service == "zookeeper" and not self.run.workers[w].paused:
            self.run.pause(w)
            self.stalled.add(w)
        grants = [e for e in self.run.lock_events("lock-put") if e.get("holder") == f"W{w}"]
        if not grants:
            self.run.wait_until(
                lambda: any(e.get("holder") == f"W{w}" for e in self.run.lock_events("lock-put")),
                f"the watch to report W{w}'s grant",
            )
            grants = [e for e in self.run.lock_events("lock-put") if e.get("holder") == f"W{w}"]
        revision = grants[-1]["revision"]
        self.run.wait_until(
            lambda: any(e.get("grant") == revision for e in self.run.lock_events("lock-delete")),
            f"etcd to revoke W{w}'s lease",
        )
        self._step(f"etcd revoked W{w}'s lease")

    def restart_storage(self) -> None:
        """Kill the storage process and start it again."""
        self.run.restart_storage()
        self._step("storage restarted")


def run_random(run: LabRun) -> None:
    """Workers loop on their own for the run's duration while the nemesis carries out the
    schedule drawn from the run's seed (lab.nemesis), the same for every receiver."""
    s = run.settings
    problem = refusal(s)
    if problem:
        raise LabError(problem)
    if s.members > 1 and run.cluster is None:
        raise LabError(f"--members {s.members} needs the cluster the lab starts (drop --etcd)")
    run.faults = run.faults or schedule(s)
    run.may_finish = True
    for number, fault in enumerate(run.faults, start=1):
        if fault.kind == "skew":
            run.worker_env[fault.target] = skewed_environment(fault.rate)
            run.log.record("skew", worker=fault.target, rate=fault.rate, fault=number)
    run.start_workers(randomized=True)
    start = run.log.now()
    until = start + s.seconds
    run.log.record("nemesis-start", at=start)
    for w in run.workers:
        run.tell(w, {"do": "go", "until": until})
    nemesis = Nemesis(run, run.faults, start)
    counter = _DecisionCounter(run.directory / "storage.jsonl")
    try:
        while (now := run.log.now()) < until:
            run.remaining()
            run.check_processes(finished_ok=True)
            nemesis.step(now)
            run.progress(
                min(0.95, (now - start) / max(s.seconds, 1e-9)),
                f"{now - start:4.1f} of {s.seconds:g} s, {counter.count()} writes decided, "
                f"{nemesis.ongoing('pause')} paused",
            )
            time.sleep(0.02)
        nemesis.finish(run.log.now())
    finally:
        with contextlib.suppress(Exception):
            nemesis.heal()
    run.progress(0.97, "letting the workers finish")


class _RecordedBytes:
    """How many bytes of events a run has recorded so far: its processes' event files plus
    the controller's own events, measured every `SIZE_CHECK_SECONDS`."""

    def __init__(self, run: LabRun) -> None:
        self.run = run
        self.measured_at = 0.0
        self.kept_counted = 0
        self.kept_bytes = 0
        self.last = 0

    def total(self) -> int:
        """The bytes recorded at the last measurement (measured again if it is old)."""
        now = time.monotonic()
        if now - self.measured_at < SIZE_CHECK_SECONDS:
            return self.last
        self.measured_at = now
        kept = list(self.run.log.kept)
        self.kept_bytes += sum(len(json.dumps(e)) + 1 for e in kept[self.kept_counted :])
        self.kept_counted = len(kept)
        files = 0
        for path in self.run.directory.glob("*.jsonl"):
            with contextlib.suppress(OSError):
                files += path.stat().st_size
        self.last = files + self.kept_bytes
        return self.last


class _DecisionCounter:
    """Counts the store's write decisions so far, reading its log incrementally."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.total = 0

    def count(self) -> int:
        """Decisions recorded up to now."""
        try:
            with open(self.path, "rb") as log:
                log.seek(self.offset)
                chunk = log.read()
        except FileNotFoundError:
            return self.total
        complete = chunk.rfind(b"\n") + 1
        self.offset += complete
        for line in chunk[:complete].splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                event = json.loads(line)
                write = event.get("op") == "write" and event["kind"] in ("deliver", "apply")
                self.total += write or (event["kind"] == "check" and not event.get("passed"))
        return self.total
