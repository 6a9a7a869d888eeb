"""A class server of several processes: Streamlit processes behind HAProxy, classes in PostgreSQL.

One Streamlit process runs every visitor's page on one core (Python runs one thread at a
time), so a lecture hall needs several. `Hall` starts them on loopback ports, the class
database they share (PostgreSQL, `fencing.class_postgres`; SQLite when there is one
process), and HAProxy in front (`fencing.proxy`) on the address the students open. Then it
watches them: a process that exits is started again on its port (after a pause that grows
when it keeps exiting at once), one that stops answering its health check for
`HUNG_SECONDS` is killed and started again (a busy process has as long as the proxy gives it
to answer each check), and so are the proxy and the database. Its
students are sent to the other processes meanwhile and find their answers there.

Every child runs in a session of its own (Ctrl-C reaches only this program, which stops
them in order: the proxy, the processes, the database) and dies with this program however
it ends (`lab.processes`). The processes share their heavy-work slots and results
(`FENCING_LAB_SHARED`) and one cookie secret, so a form opened on one is accepted by
another after a failover. Logs, the proxy's configuration and the database's password file
are in a private temporary folder, removed at the end (or by the next class server or lab
when this one was killed outright).
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TextIO

from fencing import class_postgres, proxy
from fencing.class_postgres import ClassDatabase
from lab.etcd import free_port
from lab.processes import Child, start_child
from lab.tempdirs import make_directory, sweep_abandoned

ROOT: Final = Path(__file__).resolve().parent.parent
APP: Final = ROOT / "webapp" / "app.py"
STREAMLIT_FLAGS: Final = (
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
    "--server.fileWatcherType",
    "none",
    "--runner.postScriptGC",
    "false",
)
"""The settings every served process runs with (no file watcher, no full garbage collection
after each page run: see docs/classes.md), besides its address and port."""
SHARED_ENV: Final = "FENCING_LAB_SHARED"
CLASSES_ENV: Final = "FENCING_LAB_CLASSES"
DATABASE_ENV: Final = "FENCING_LAB_CLASS_DATABASE"
COOKIE_SECRET_ENV: Final = "STREAMLIT_SERVER_COOKIE_SECRET"
START_SECONDS: Final = 120.0
"""How long the processes and the proxy may take to answer at start."""
WATCH_SECONDS: Final = 0.5
"""How often the children are looked at."""
HEALTH_EVERY_SECONDS: Final = 2.0
"""How often each process's health is asked by this program."""
HUNG_SECONDS: Final = 45.0
"""How long a running process may fail its health check before it is restarted."""
QUICK_EXIT_SECONDS: Final = 10.0
"""A process that exits sooner than this after its start is paused before the next start."""
MOST_PAUSE_SECONDS: Final = 30.0
STOP_GRACE_SECONDS: Final = 10.0


class HallError(RuntimeError):
    """The class server cannot start, in one sentence."""


@dataclass(frozen=True)
class HallSettings:
    """What to serve: how many processes, where students connect, where classes are kept."""

    workers: int
    address: str
    port: int
    classes: Path
    database_folder: Path | None = None
    shared: str = "machine"
    """Which processes share slots and results (`FENCING_LAB_SHARED`): by default every
    server of this user on the machine."""

    @property
    def on_postgres(self) -> bool:
        """Whether the classes are kept in PostgreSQL (several processes) or SQLite (one)."""
        return self.workers > 1


def healthy(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether a Streamlit server (or the proxy before them) answers its health check."""
    url = f"http://{host}:{port}{proxy.HEALTH_PATH}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _last_lines(log: Path, count: int = 3) -> str:
    """The last lines of a log, for an error message."""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    except OSError:
        return "no log"
    kept = [line for line in lines if line][-count:]
    return " / ".join(kept)[:400] or "no message"


@dataclass
class Process:
    """One Streamlit process of the class server, as the watcher knows it."""

    index: int
    port: int
    log: Path
    child: Child | None = None
    started: float = 0.0
    quick_exits: int = 0
    start_after: float = 0.0
    unhealthy_since: float | None = None
    checked: float = 0.0
    restarts: int = 0
    in_service: bool = True

    @property
    def name(self) -> str:
        """Its name in the proxy's cookie and in messages."""
        return f"p{self.index}"


@dataclass
class Hall:
    """The class server: start it, watch it, stop it."""

    settings: HallSettings
    say: Callable[[str], None] = print
    folder: Path = field(init=False)
    processes: list[Process] = field(default_factory=list)
    proxy_child: Child | None = None
    database: ClassDatabase | None = None
    cookie_secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    states_checked: float = 0.0
    _logs: list[TextIO] = field(default_factory=list)

    def __post_init__(self) -> None:
        sweep_abandoned()  # the folders of class servers and labs that were killed outright
        self.folder = make_directory("hall")

    # ----- starting ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the database, the processes and the proxy; wait until students can connect."""
        if problem := proxy.missing():
            raise HallError(problem)
        if self.settings.on_postgres:
            self._start_database()
        self.processes = [
            Process(index, free_port(), self.folder / f"process-{index}.log")
            for index in range(1, self.settings.workers + 1)
        ]
        for process in self.processes:
            self._start_process(process)
        deadline = time.monotonic() + START_SECONDS
        for process in self.processes:
            self._wait_process(process, deadline)
        self._start_proxy(deadline)

    def _start_database(self) -> None:
        """PostgreSQL on the class folder's cluster, with the `classes` database."""
        from lab.postgres import missing

        if problem := missing():
            raise HallError(f"several processes keep their classes in PostgreSQL: {problem}")
        folder = self.settings.database_folder or class_postgres.default_folder(
            self.settings.classes
        )
        try:
            self.database = class_postgres.start(folder, self.settings.workers, self.folder)
        except Exception as error:  # lab.settings.LabError and OS errors: one sentence
            raise HallError(f"the class database did not start: {error}") from None

    def environment(self) -> dict[str, str]:
        """What every process is started with besides the usual environment."""
        extra = {
            SHARED_ENV: self.settings.shared,
            CLASSES_ENV: str(self.settings.classes),
            COOKIE_SECRET_ENV: self.cookie_secret,
        }
        if self.database is not None:
            extra[DATABASE_ENV] = self.database.conninfo
        return extra

    def _start_process(self, process: Process) -> None:
        """Start (or start again) one Streamlit process on its port."""
        argv = [sys.executable, "-m", "streamlit", "run", str(APP)]
        argv += ["--server.address", "127.0.0.1", "--server.port", str(process.port)]
        argv += STREAMLIT_FLAGS
        log = process.log.open("a")
        self._logs.append(log)
        process.child = start_child(
            f"process {process.index}",
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            extra_env=self.environment(),
        )
        process.started = time.monotonic()
        process.unhealthy_since = None

    def _wait_process(self, process: Process, deadline: float) -> None:
        """Wait until a process answers its health check, or say why it cannot start."""
        while not healthy("127.0.0.1", process.port):
            if process.child is None or not process.child.alive():
                raise HallError(
                    f"server process {process.index} did not start: {_last_lines(process.log)}"
                )
            if time.monotonic() > deadline:
                raise HallError(f"server process {process.index} did not answer in time")
            time.sleep(0.2)

    def _start_proxy(self, deadline: float) -> None:
        """Write the proxy's configuration, check it, start HAProxy and wait for it."""
        config = self.folder / "haproxy.cfg"
        backends = [proxy.Backend(p.name, p.port) for p in self.processes]
        config.write_text(
            proxy.configuration(
                self.settings.address, self.settings.port, backends, self.folder / "haproxy.sock"
            )
        )
        checked = subprocess.run(
            [proxy.program(), "-c", "-q", "-f", str(config)],
            capture_output=True,
            text=True,
            check=False,
        )
        if checked.returncode != 0:
            raise HallError(f"the proxy refused its configuration: {checked.stderr.strip()[:300]}")
        log_path = self.folder / "proxy.log"
        log = log_path.open("a")
        self._logs.append(log)
        self.proxy_child = start_child(
            "proxy", [proxy.program(), "-db", "-f", str(config)], stdout=log, stderr=log
        )
        host = self.local_host()
        while not healthy(host, self.settings.port):
            if not self.proxy_child.alive():
                raise HallError(
                    f"the proxy did not start on {self.settings.address}:{self.settings.port}: "
                    f"{_last_lines(log_path, 1)}"
                )
            if time.monotonic() > deadline:
                raise HallError("the proxy did not answer in time")
            time.sleep(0.2)

    def students_address(self) -> str:
        """The address students open: this machine's on its network when the proxy listens
        on every interface (found without sending anything), else the one it listens on."""
        if self.local_host() != "127.0.0.1" or self.settings.address.startswith("127."):
            return f"http://{self.settings.address}:{self.settings.port}"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.connect(("192.0.2.1", 9))  # a documentation address: nothing is sent
                found = str(probe.getsockname()[0])
            except OSError:
                found = "127.0.0.1"
        return f"http://{found}:{self.settings.port}"

    def local_host(self) -> str:
        """Where this machine reaches the proxy (loopback when it listens everywhere)."""
        if self.settings.address in ("0.0.0.0", "::", "[::]", ""):
            return "127.0.0.1"
        return self.settings.address

    # ----- watching ---------------------------------------------------------------------------

    def watch_once(self, now: float | None = None) -> None:
        """Look at every child once: start again what has stopped or stopped answering."""
        now = time.monotonic() if now is None else now
        for process in self.processes:
            self._watch_process(process, now)
        if self.proxy_child is not None and not self.proxy_child.alive():
            self.say(f"the proxy {self.proxy_child.ending()}; starting it again")
            self._start_proxy(time.monotonic() + START_SECONDS)
        if now - self.states_checked >= HEALTH_EVERY_SECONDS:
            self.states_checked = now
            self._say_state_changes(proxy.server_states(self.folder / "haproxy.sock"))
        database = self.database
        if database is not None and not database.server.alive():
            self.say("the class database stopped; starting it again")
            database.server.start()

    def _say_state_changes(self, states: dict[str, bool]) -> None:
        """Tell when the proxy takes a process out of service or puts it back."""
        for process in self.processes:
            up = states.get(process.name)
            if up is None or up == process.in_service:
                continue
            if up and not self._answers(process):
                continue  # the proxy has not seen it die yet: a stale "up"
            process.in_service = up
            self.say(
                f"server process {process.index} is in service again"
                if up
                else f"the proxy took server process {process.index} out of service"
            )

    def _answers(self, process: Process) -> bool:
        """Whether the process runs and answers its health check itself."""
        return process.child is not None and healthy(
            "127.0.0.1", process.port, proxy.CHECK_TIMEOUT_SECONDS
        )

    def _watch_process(self, process: Process, now: float) -> None:
        """Start a stopped process again (after its pause), restart one that hangs."""
        child = process.child
        if child is not None and not child.alive():
            ran = now - process.started
            process.quick_exits = process.quick_exits + 1 if ran < QUICK_EXIT_SECONDS else 0
            pause = min(2.0**process.quick_exits - 1, MOST_PAUSE_SECONDS)
            self.say(
                f"server process {process.index} {child.ending()} after {ran:.0f} s; its "
                f"students are moved to the others, and it starts again"
                + (f" in {pause:.0f} s" if pause >= 1 else "")
            )
            child.stop()
            process.child = None
            process.in_service = False  # gone, whether or not the proxy was seen to notice
            process.start_after = now + pause
        if process.child is None:
            if now >= process.start_after:
                process.restarts += 1
                self._start_process(process)
                pid = process.child.pid if process.child else "-"
                self.say(f"server process {process.index} started again (pid {pid})")
            return
        if now - process.checked < HEALTH_EVERY_SECONDS:
            return
        process.checked = now
        if healthy("127.0.0.1", process.port, proxy.CHECK_TIMEOUT_SECONDS):
            process.unhealthy_since = None
            return
        if now - process.started < START_SECONDS:
            return
        process.unhealthy_since = process.unhealthy_since or now
        if now - process.unhealthy_since >= HUNG_SECONDS:
            self.say(
                f"server process {process.index} has not answered for {HUNG_SECONDS:.0f} s; "
                "starting it again"
            )
            process.child.kill()

    def run(self) -> None:
        """Watch until interrupted (Ctrl-C or SIGTERM raise KeyboardInterrupt)."""
        while True:
            self.watch_once()
            time.sleep(WATCH_SECONDS)

    # ----- stopping ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the proxy, then the processes, then the database; remove the private folder."""
        if self.proxy_child is not None:
            self.proxy_child.stop(STOP_GRACE_SECONDS)
        for process in self.processes:
            if process.child is not None:
                process.child.stop(STOP_GRACE_SECONDS)
        if self.database is not None:
            self.database.server.stop()
        for log in self._logs:
            with contextlib.suppress(OSError):
                log.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def describe(self) -> list[str]:
        """What runs where, for the console."""
        lines = [
            f"  server process {p.index}: pid {p.child.pid if p.child else '-'}, 127.0.0.1:{p.port}"
            for p in self.processes
        ]
        if self.proxy_child is not None:
            lines.append(
                f"  proxy (HAProxy): pid {self.proxy_child.pid}, "
                f"{self.settings.address}:{self.settings.port}, sticky sessions, health checks"
            )
        if self.database is not None:
            server = self.database.server
            lines.append(
                f"  classes: PostgreSQL, pid {server.child.pid if server.child else '-'}, "
                f"127.0.0.1:{server.port}, data in {server.cluster.directory}"
            )
        else:
            lines.append(f"  classes: SQLite in {self.settings.classes}")
        lines.append(f"  logs of this run: {self.folder} (removed when the server stops)")
        return lines
