"""The servers the class benchmark measures: one Streamlit process, or the class server.

`one_process` is `streamlit run webapp/app.py` with the served settings (what `make run`
and `make serve-class` start); `class_server` is `python -m fencing.serve --workers N`
(what `make serve-class WORKERS=N` starts): N processes behind HAProxy, the classes in
PostgreSQL. Both run in a temporary folder of their own (classes, shared results and slots,
the database), always stopped, and give what the benchmark reads: the address students
open, the processes by role (for their CPU and memory), their logs, and the answers the
store itself holds for a class (read from SQLite or PostgreSQL, not through the app).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fencing.hall import APP, STREAMLIT_FLAGS  # noqa: E402

STARTUP_TIMEOUT_S: Final = 180.0
PR_SET_PDEATHSIG: Final = 1
PROCESS_LINE: Final = re.compile(r"server process (\d+): pid (\d+), 127\.0\.0\.1:(\d+)")
PROXY_LINE: Final = re.compile(r"proxy \(HAProxy\): pid (\d+)")
DATABASE_LINE: Final = re.compile(r"classes: PostgreSQL, pid (\d+), 127\.0\.0\.1:(\d+)")
LOGS_LINE: Final = re.compile(r"logs of this run: (\S+)")

Answers = list[tuple[str, str, str]]
"""A class's answers as the store holds them: (student token, exercise, answer), in order."""


@dataclass(frozen=True)
class Served:
    """A running server: where students connect, its processes by role, its logs, and a
    reader of the answers its store holds for a class."""

    url: str
    roles: dict[str, tuple[int, ...]]
    logs: Callable[[], list[Path]]
    answers: Callable[[str], Answers]
    description: tuple[str, ...]


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    """In the child: have the kernel stop it when the benchmark dies, however it dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _healthy(port: int) -> bool:
    """Whether something answers the health check on a loopback port."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as a:
            return bool(a.status == 200)
    except OSError:
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited after 60 s."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def _environment(folder: Path) -> dict[str, str]:
    """The server's environment: classes, shared results and slots in the bench's folder."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "FENCING_LAB_CLASSES": str(folder / "classes"),
        "FENCING_LAB_SHARED": str(folder / "shared"),
    }


@contextlib.contextmanager
def one_process(folder: Path, options: Sequence[str] = ()) -> Iterator[Served]:
    """`streamlit run webapp/app.py` with the served settings on a free loopback port
    (`options`: extra Streamlit settings as `name=value`, to measure what one changes)."""
    port = free_port()
    log = folder / "server.log"
    command = [sys.executable, "-m", "streamlit", "run", str(APP)]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port), *STREAMLIT_FLAGS]
    for option in options:
        name, _, value = option.partition("=")
        command += [f"--{name}", value]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=_environment(folder),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _healthy(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        database = folder / "classes" / "classes.sqlite3"
        yield Served(
            url=f"ws://127.0.0.1:{port}",
            roles={"server process": (process.pid,)},
            logs=lambda: [log],
            answers=lambda class_id: sqlite_answers(database, class_id),
            description=(f"  one server process, pid {process.pid}, 127.0.0.1:{port}",),
        )
    finally:
        _stop(process)


@contextlib.contextmanager
def class_server(folder: Path, workers: int) -> Iterator[Served]:
    """`python -m fencing.serve --workers N` on a free loopback port, its PostgreSQL in the
    bench's folder."""
    port = free_port()
    database_folder = folder / "postgres"
    folder.chmod(0o755)  # PostgreSQL runs as another user when this runs as root
    command = [sys.executable, "-m", "fencing.serve", "--workers", str(workers)]
    command += ["--address", "127.0.0.1", "--port", str(port)]
    command += ["--database-folder", str(database_folder)]
    lines: list[str] = []
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=_environment(folder),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_die_with_parent,
    )

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            lines.append(raw.decode(errors="replace").rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not any(LOGS_LINE.search(line) for line in lines):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the class server did not start:\n" + "\n".join(lines))
            time.sleep(0.2)
        yield _served(lines, port, database_folder)
    finally:
        _stop(process)
        with contextlib.suppress(Exception):
            from lab.postgres import Cluster

            if Cluster.exists_at(database_folder):
                Cluster.at(database_folder).remove()


def _served(lines: list[str], port: int, database_folder: Path) -> Served:
    """What the class server said it runs, as the benchmark reads it."""
    roles: dict[str, tuple[int, ...]] = {}
    database_port = 0
    logs = Path()
    for line in lines:
        if found := PROCESS_LINE.search(line):
            roles[f"server process {found.group(1)}"] = (int(found.group(2)),)
        if found := PROXY_LINE.search(line):
            roles["proxy"] = (int(found.group(1)),)
        if found := DATABASE_LINE.search(line):
            roles["database"] = (int(found.group(1)),)
            database_port = int(found.group(2))
        if found := LOGS_LINE.search(line):
            logs = Path(found.group(1))
    return Served(
        url=f"ws://127.0.0.1:{port}",
        roles=roles,
        logs=lambda: sorted(logs.glob("process-*.log")),
        answers=lambda class_id: postgres_answers(database_folder, database_port, class_id),
        description=tuple(line for line in lines if line.startswith("  ")),
    )


def sqlite_answers(database: Path, class_id: str) -> Answers:
    """A class's answers as the SQLite file holds them."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT token, exercise_id, answer FROM answers WHERE class_id = ? ORDER BY id",
            (class_id,),
        ).fetchall()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def postgres_answers(database_folder: Path, port: int, class_id: str) -> Answers:
    """A class's answers as PostgreSQL holds them."""
    import psycopg

    from lab.postgres import SUPERUSER, Cluster

    password = Cluster.at(database_folder).password()
    with psycopg.connect(
        host="127.0.0.1", port=port, user=SUPERUSER, password=password, dbname="classes"
    ) as db:
        rows = db.execute(
            "SELECT token, exercise_id, answer FROM answers WHERE class_id = %s ORDER BY id",
            (class_id,),
        ).fetchall()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


# ----- CPU and memory of a process and its children ------------------------------------------


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (empty when it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def children_of(pid: int) -> list[int]:
    """Every live process below `pid`."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))):
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent:
                found.append(child)
                frontier.append(child)
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of a process, of its children that ended (which the kernel
    adds to it when they are collected), and of its live descendants."""
    ticks = os.sysconf("SC_CLK_TCK")
    fields = _stat_fields(pid)
    if not fields:
        return math.nan
    total = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    for child in children_of(pid):
        if child_fields := _stat_fields(child):
            total += int(child_fields[11]) + int(child_fields[12])
    return total / ticks


def _status_kb(pid: int, field: str) -> int:
    """A memory figure of /proc/<pid>/status in kB (0 when the process is gone)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def peak_memory_mb(pid: int) -> float:
    """Peak resident memory of one process (VmHWM), in MB."""
    return _status_kb(pid, "VmHWM") * 1024 / 1e6


def tree_memory_mb(pid: int) -> float:
    """Resident memory now of a process and its live descendants (VmRSS, summed; pages they
    share are counted in each), in MB."""
    return sum(_status_kb(p, "VmRSS") for p in (pid, *children_of(pid))) * 1024 / 1e6
