"""A real PostgreSQL for the lab's store: a cluster made by initdb, a server started on it.

`Cluster.create` runs Debian's `initdb` into a temporary folder (`fencing-lab-postgres-…`,
removed by `Cluster.remove`, or by the next lab if this one was killed). `PostgresServer`
starts `postgres` on a cluster, listening on 127.0.0.1 and a free port only (its Unix
socket in the cluster's folder), waits until it answers, and stops it (a fast shutdown) or
kills it (SIGKILL: a crash, after which the next start runs crash recovery). The server is a
guarded child: it dies with the thread that started it, so a killed lab leaves no orphan.

PostgreSQL refuses to run as root: when the lab runs as root, initdb and postgres run as the
unprivileged user `postgres` (or `nobody` when there is none) and the cluster's folder is
given to that user. Connections are by password (SCRAM): the password is drawn per cluster
and kept in a file only the lab's own user can read. `missing()` says in one sentence what
the machine lacks, before anything starts.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lab.etcd import free_port
from lab.processes import Child, child_environment
from lab.settings import LabError, LabInputError
from lab.sysv_memory import release_segments_under
from lab.tempdirs import make_directory, sweep_abandoned

BIN_ENV: Final = "FENCING_LAB_POSTGRES_BIN"
"""A folder holding `initdb` and `postgres`, to use instead of the Debian install."""
DEBIAN_BIN: Final = Path("/usr/lib/postgresql")
USERS: Final = ("postgres", "nobody")
"""Unprivileged users PostgreSQL runs as when the lab runs as root, in order of preference."""
SUPERUSER: Final = "lab"
DATABASE: Final = "postgres"
INITDB_SECONDS: Final = 60.0
START_SECONDS: Final = 30.0
"""How long a started server may take to answer (crash recovery included)."""
STOP_SECONDS: Final = 10.0
START_ATTEMPTS: Final = 20
"""Attempts at a start (fresh ports; a killed server's processes may still be leaving)."""
RETRY_SECONDS: Final = 0.25
POLL_SECONDS: Final = 0.02
PASSWORD_FILE: Final = "lab.password"
DATA: Final = "data"
LOG: Final = "postgres.log"
SETTINGS: Final = (
    "listen_addresses=127.0.0.1",
    "max_connections=40",
    "shared_buffers=16MB",
    "dynamic_shared_memory_type=mmap",
    "max_wal_size=64MB",
    "log_min_messages=warning",
    "logging_collector=off",
)
"""Server settings: loopback only, small memory, dynamic shared memory in the data folder
(so a killed server leaves nothing in /dev/shm)."""
TRAMPOLINE: Final = (
    "import ctypes, os, signal, sys\n"
    "uid, gid = int(sys.argv[2]), int(sys.argv[3])\n"
    "if os.geteuid() != uid:\n"
    "    os.setgroups([]); os.setgid(gid); os.setuid(uid)\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"  # 1 = PR_SET_PDEATHSIG, after setuid
    "os.getppid() == int(sys.argv[1]) or os._exit(70)\n"
    "os.execv(sys.argv[4], sys.argv[4:])\n"
)
"""Become the unprivileged user, then set the parent-death signal (a change of user clears
it), make sure the parent is still there, and become the program."""


class PostgresMissing(LabInputError):
    """The machine cannot run the lab's PostgreSQL (a program, a user or psycopg is missing)."""


def bin_dir() -> Path | None:
    """The folder of `initdb` and `postgres`: FENCING_LAB_POSTGRES_BIN, else Debian's newest."""
    given = os.environ.get(BIN_ENV, "").strip()
    candidates = [Path(given)] if given else []
    if not given and DEBIAN_BIN.is_dir():
        versions = [p for p in DEBIAN_BIN.iterdir() if p.name.isdigit()]
        candidates = [p / "bin" for p in sorted(versions, key=lambda p: -int(p.name))]
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in ("initdb", "postgres")):
            return folder
    return None


def run_as() -> tuple[int, int]:
    """The user and group PostgreSQL runs as: ours, or an unprivileged one when we are root."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    for name in USERS:
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            if entry.pw_uid != 0:
                return entry.pw_uid, entry.pw_gid
    raise PostgresMissing(
        "PostgreSQL refuses to run as root and there is no unprivileged user to run it as: "
        f"create a user named {USERS[0]!r}"
    )


def missing() -> str:
    """What the machine lacks to run the lab on PostgreSQL, in one sentence ('' if nothing)."""
    if bin_dir() is None:
        return (
            "PostgreSQL is not installed: --database postgres needs initdb and postgres "
            f"(Debian's postgresql package), or their folder in {BIN_ENV}"
        )
    try:
        run_as()
    except PostgresMissing as error:
        return str(error)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return (
            "the psycopg package is missing: install the project's dependencies "
            "(`make .venv/.installed`)"
        )
    return ""


def require() -> None:
    """Raise `PostgresMissing` with its one sentence when the lab cannot run PostgreSQL."""
    problem = missing()
    if problem:
        raise PostgresMissing(problem)


def _guarded(user: tuple[int, int], argv: list[str]) -> list[str]:
    """The command line that runs `argv` as `user` under the parent-death trampoline."""
    return [sys.executable, "-S", "-c", TRAMPOLINE, str(os.getpid()), *map(str, user), *argv]


def _last_line(text: str) -> str:
    """The last non-empty line of a program's output (for an error message)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no message"


@dataclass(frozen=True)
class Cluster:
    """A PostgreSQL data folder made by initdb, and how the lab logs in to it."""

    directory: Path
    user: tuple[int, int]

    @property
    def data(self) -> Path:
        """The data folder (PGDATA)."""
        return self.directory / DATA

    @property
    def log(self) -> Path:
        """The server's log (every server started on this cluster appends to it)."""
        return self.directory / LOG

    def password(self) -> str:
        """The lab's password for the cluster's superuser."""
        return (self.directory / PASSWORD_FILE).read_text().strip()

    @staticmethod
    def create(folder: Path | None = None) -> Cluster:
        """Run initdb into a new temporary folder, or into `folder` (made here, private, and
        kept: for data that outlives the program); raises `PostgresMissing` or `LabError`."""
        require()
        binaries, user = bin_dir(), run_as()
        assert binaries is not None
        if folder is None:
            sweep_abandoned()
            directory = make_directory("postgres")
        else:
            directory = _new_folder(folder)
        try:
            password = secrets.token_urlsafe(24)
            secret = directory / PASSWORD_FILE
            secret.touch(mode=0o600)
            secret.write_text(password + "\n")
            given = directory / "initdb.password"
            given.write_text(password + "\n")
            os.chown(directory, *user)
            os.chown(given, *user)
            argv = [
                str(binaries / "initdb"),
                f"--pgdata={directory / DATA}",
                f"--username={SUPERUSER}",
                f"--pwfile={given}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ]
            done = subprocess.run(
                _guarded(user, argv),
                cwd=directory,
                env=child_environment(),
                capture_output=True,
                text=True,
                timeout=INITDB_SECONDS,
                check=False,
            )
            given.unlink()
            if done.returncode != 0:
                raise LabError(f"initdb failed: {_last_line(done.stderr or done.stdout)}")
        except subprocess.TimeoutExpired:
            shutil.rmtree(directory, ignore_errors=True)
            raise LabError(f"initdb did not finish within {INITDB_SECONDS:g} s") from None
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return Cluster(directory, user)

    @staticmethod
    def exists_at(directory: Path) -> bool:
        """Whether initdb made a cluster in `directory`."""
        return (directory / DATA / "PG_VERSION").is_file()

    @staticmethod
    def at(directory: Path) -> Cluster:
        """The cluster initdb made in `directory` (by this lab, earlier)."""
        return Cluster(directory, run_as())

    def remove(self) -> None:
        """Remove the cluster's folder (stop every server on it first), and the shared-memory
        segment a killed server left."""
        release_segments_under(self.directory)
        shutil.rmtree(self.directory, ignore_errors=True)


def _new_folder(folder: Path) -> Path:
    """A new private folder for a cluster that is kept (refused when it exists already)."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700)
    except FileExistsError:
        raise LabError(f"{folder} exists already: a cluster is made in a new folder") from None
    except OSError as error:
        raise LabError(f"{folder} cannot be made: {error.strerror}") from None
    return folder


def connect_args(port: int, password: str, database: str = DATABASE) -> dict[str, Any]:
    """psycopg's keyword arguments to reach the server on the loopback port."""
    return {
        "host": "127.0.0.1",
        "port": port,
        "user": SUPERUSER,
        "password": password,
        "dbname": database,
        "connect_timeout": 5,
        "application_name": "fencing-lab",
    }


class PostgresServer:
    """One `postgres` process on a cluster: started, waited for, stopped or killed.

    `port` asks for a port (0: a free one each start); `settings` are added to `SETTINGS`."""

    def __init__(self, cluster: Cluster, port: int = 0, settings: tuple[str, ...] = ()) -> None:
        self.cluster = cluster
        self.wanted_port = port
        self.settings = settings
        self.port = 0
        self.start_seconds = 0.0
        self.child: Child | None = None

    def connect_args(self) -> dict[str, Any]:
        """psycopg's keyword arguments for this running server."""
        return connect_args(self.port, self.cluster.password())

    def start(self) -> PostgresServer:
        """Start the server and wait until it answers, trying again with a fresh port while
        the processes of a server killed on this cluster are still leaving."""
        binaries = bin_dir()
        if binaries is None:
            raise PostgresMissing(missing())
        started = time.monotonic()
        deadline = started + START_SECONDS
        problem = ""
        for _ in range(START_ATTEMPTS):
            self._wait_previous_gone(deadline)
            try:
                self._start_once(binaries)
                self.start_seconds = time.monotonic() - started
                return self
            except LabError as error:
                problem = str(error)
                self.kill()
            except BaseException:
                self.kill()
                raise
            if time.monotonic() > deadline:
                break
            time.sleep(RETRY_SECONDS)
        raise LabError(f"PostgreSQL could not start: {problem}")

    def _wait_previous_gone(self, deadline: float) -> None:
        """Wait until the server last started on the cluster has left (a killed one lingers
        until it is reaped, and PostgreSQL will not start beside it)."""
        try:
            pid = int((self.cluster.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)

    def _start_once(self, binaries: Path) -> None:
        """One attempt: a free port, the process, its first answer."""
        self.port = self.wanted_port or free_port()
        argv = [str(binaries / "postgres"), "-D", str(self.cluster.data), "-p", str(self.port)]
        argv += ["-c", f"unix_socket_directories={self.cluster.directory}"]
        for setting in (*SETTINGS, *self.settings):
            argv += ["-c", setting]
        with open(self.cluster.log, "a") as log:
            os.chown(self.cluster.log, *self.cluster.user)
            process = subprocess.Popen(
                _guarded(self.cluster.user, argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.cluster.directory,
                env=child_environment(),
                start_new_session=True,
            )
        self.child = Child("postgres", process)
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Wait until the server takes a connection, or raise `LabError` with its last word."""
        import psycopg

        deadline = time.monotonic() + START_SECONDS
        last = ""
        while time.monotonic() < deadline:
            if self.child is None or not self.child.alive():
                raise LabError(f"postgres exited as it started ({self.last_log_line()})")
            try:
                with psycopg.connect(**{**self.connect_args(), "connect_timeout": 2}):
                    return
            except psycopg.OperationalError as error:
                last = _last_line(str(error))
            time.sleep(POLL_SECONDS)
        raise LabError(f"postgres did not answer within {START_SECONDS:g} s ({last})")

    def last_log_line(self) -> str:
        """The server log's last line."""
        try:
            return _last_line(self.cluster.log.read_text(errors="replace"))
        except OSError:
            return "no message"

    def alive(self) -> bool:
        """Whether the server process runs."""
        return self.child is not None and self.child.alive()

    def stop(self) -> None:
        """A fast shutdown (SIGINT: sessions are ended, a checkpoint is written); SIGKILL if
        it takes longer than `STOP_SECONDS`."""
        child, self.child = self.child, None
        if child is None:
            return
        if child.alive():
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.process.wait(timeout=STOP_SECONDS)
        child.kill()

    def kill(self) -> None:
        """SIGKILL the server (a crash: the next start on the cluster runs crash recovery)."""
        child, self.child = self.child, None
        if child is not None:
            child.kill()


@contextlib.contextmanager
def running(cluster: Cluster) -> Iterator[PostgresServer]:
    """A server on the cluster for the duration of the block."""
    server = PostgresServer(cluster).start()
    try:
        yield server
    finally:
        server.stop()
