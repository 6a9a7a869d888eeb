"""The class server of two processes behind HAProxy, classes in PostgreSQL, all started here
on loopback (`python -m fencing.serve --workers 2`, as `make serve-class WORKERS=2`).

A student's session stays on one process (witnessed by the processes' own TCP connections,
not by the proxy); a student whose process is killed reconnects to the other one and finds
every answer given; the killed process is started again and takes students again; the
teacher's dashboard counts students of both processes; a class outlives a restart of the
whole server. Timing is the benchmark's business: nothing here is timed but the waits.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fencing import proxy
from fencing.class_postgres import reachable_by
from fencing.hall import healthy
from lab.postgres import Cluster
from lab.postgres import missing as postgres_missing
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import class_session  # noqa: E402
from class_servers import postgres_answers  # noqa: E402
from streamlit_client import Run, SessionBroken, StreamlitSession  # noqa: E402

pytestmark = pytest.mark.skipif(
    bool(proxy.missing() or postgres_missing()),
    reason=proxy.missing() or postgres_missing() or "HAProxy and PostgreSQL are there",
)

START_SECONDS = 180.0
"""How long the whole server may take to start on a loaded machine."""
TIMEOUT = 90.0
"""How long one page run may take on a loaded machine."""
PROCESS_LINE = re.compile(r"server process (\d+): pid (\d+), 127\.0\.0\.1:(\d+)")
DATABASE_LINE = re.compile(r"classes: PostgreSQL, pid \d+, 127\.0\.0\.1:(\d+)")


@dataclass
class RunningHall:
    """The class server started by this module: its address, processes and database."""

    port: int
    folder: Path
    database_folder: Path
    process: subprocess.Popen[str] | None = None
    lines: list[str] = field(default_factory=list)
    pids: dict[int, int] = field(default_factory=dict)
    ports: dict[int, int] = field(default_factory=dict)
    database_port: int = 0

    @property
    def url(self) -> str:
        """The students' websocket address."""
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start `python -m fencing.serve --workers 2` and wait until it serves."""
        environment = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "FENCING_LAB_CLASSES": str(self.folder / "classes"),
            "FENCING_LAB_SHARED": str(self.folder / "shared"),
        }
        command = [sys.executable, "-m", "fencing.serve", "--workers", "2"]
        command += ["--address", "127.0.0.1", "--port", str(self.port)]
        command += ["--database-folder", str(self.database_folder)]
        self.lines = []
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, text=True
        )
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()
        self.wait_for(lambda: sum("classes:" in line for line in self.lines) > 0, START_SECONDS)
        for line in self.lines:
            if found := PROCESS_LINE.search(line):
                index, pid, port = map(int, found.groups())
                self.pids[index], self.ports[index] = pid, port
            if found := DATABASE_LINE.search(line):
                self.database_port = int(found.group(1))
        assert sorted(self.pids) == [1, 2] and self.database_port

    def _read(self, process: subprocess.Popen[str]) -> None:
        """Keep every line the server prints."""
        assert process.stdout is not None
        for line in process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, condition: Callable[[], bool], seconds: float) -> None:
        """Wait until `condition` holds (failing with what the server said if it does not)."""
        deadline = time.monotonic() + seconds
        while not condition():
            assert self.process is not None
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the class server did not get there:\n" + "\n".join(self.lines))
            time.sleep(0.2)

    def stop(self) -> int:
        """SIGTERM the server (as Ctrl-C); its exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=120)

    def answers_in_the_database(self, class_id: str) -> list[tuple[str, str, str]]:
        """Every answer of a class as PostgreSQL itself has it (token, exercise, answer)."""
        return postgres_answers(self.database_folder, self.database_port, class_id)


@pytest.fixture(scope="module")
def hall() -> Iterator[RunningHall]:
    """The class server, for this module; stopped (and its folders removed) at the end."""
    folder = Path(tempfile.mkdtemp(prefix="fencing-lab-hall-test-"))
    database_folder = Path(tempfile.gettempdir()) / f"fencing-lab-hall-db-{secrets.token_hex(6)}"
    running = RunningHall(free_port(), folder, database_folder)
    try:
        running.start()
        yield running
    finally:
        if running.process is not None and running.process.poll() is None:
            running.stop()
        if Cluster.exists_at(database_folder):
            Cluster.at(database_folder).remove()
        shutil.rmtree(database_folder, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)


def established(port: int) -> int:
    """TCP connections open to a local port, as the kernel lists them (the process's side)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as listing:
            for line in listing.readlines()[1:]:
                fields = line.split()
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                if local_port == port and fields[3] == "01":  # 01: ESTABLISHED
                    count += 1
    return count


def settled(port: int) -> int:
    """Connections open to a port, the proxy's passing health checks left out (the least of a
    few looks)."""
    looks = []
    for _ in range(5):
        looks.append(established(port))
        time.sleep(0.1)
    return min(looks)


def said(hall: RunningHall, words: str) -> bool:
    """Whether the server has printed a line with these words."""
    return any(words in line for line in hall.lines)


def in_service(hall: RunningHall, index: int) -> bool:
    """Whether the proxy sends students to a process, by the last thing the server said."""
    for line in reversed(hall.lines):
        if f"took server process {index} out of service" in line:
            return False
        if f"server process {index} is in service again" in line:
            return True
    return True


def run_async(coroutine: Any) -> Any:
    """Run one coroutine to its end, on a thread of its own: the test process may already
    run an event loop on this one (Playwright's, kept by a browser test that ran before)."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


async def _tabs(url: str, jar: dict[str, str], count: int) -> list[StreamlitSession]:
    """Open `count` tabs of one browser (one cookie jar), each with a page run."""
    tabs = []
    for _ in range(count):
        tab = await StreamlitSession.open(url, TIMEOUT, jar)
        run = await tab.open_page("chapter-1", "step=0")
        assert not run.errors, run.errors
        tabs.append(tab)
    return tabs


def test_one_browser_stays_on_one_process_and_new_ones_go_to_the_other(
    hall: RunningHall,
) -> None:
    async def scenario() -> tuple[str, str, dict[int, int], dict[int, int]]:
        before = {index: settled(port) for index, port in hall.ports.items()}
        jar: dict[str, str] = {}
        tabs = await _tabs(hall.url, jar, 4)
        during = {index: settled(port) for index, port in hall.ports.items()}
        newcomer: dict[str, str] = {}
        other = await StreamlitSession.open(hall.url, TIMEOUT, newcomer)
        for tab in [*tabs, other]:
            await tab.close()
        return jar[proxy.COOKIE], newcomer[proxy.COOKIE], before, during

    first, second, before, during = run_async(scenario())
    home = int(first.removeprefix("p"))
    away = 3 - home
    assert during[home] - before[home] >= 4  # the four tabs, each on the same process
    assert during[away] - before[away] <= 0
    assert second == f"p{away}"  # a new student goes where fewer are connected


async def _student_answers(hall: RunningHall) -> tuple[str, str, str, dict[str, str], Run]:
    """A teacher creates a class; a student joins and predicts; (class, key, token, the
    student's cookies, the answered run)."""
    teacher = await StreamlitSession.open(hall.url, TIMEOUT, {})
    class_id, key = await class_session.create_class(teacher, "Lecture hall")
    await teacher.close()
    jar: dict[str, str] = {}
    tab = await StreamlitSession.open(hall.url, TIMEOUT, jar)
    token, run = await class_session.join_class(tab, class_id, "Ada")
    run = await class_session.open_exercise(tab, class_id, token, "lease-predict")
    answered = await class_session.predict(tab, run, "lease-predict", ["P1"])
    assert class_session.graded(answered)
    await tab.close()
    return class_id, key, token, jar, answered


def test_a_student_of_a_killed_process_reconnects_with_their_answers(hall: RunningHall) -> None:
    class_id, _, token, jar, _ = run_async(_student_answers(hall))
    home = int(jar[proxy.COOKIE].removeprefix("p"))
    away = 3 - home

    async def reconnect() -> tuple[Run, Run, dict[str, str]]:
        tab = await StreamlitSession.open(hall.url, TIMEOUT, jar)  # the same browser
        run = await class_session.open_exercise(tab, class_id, token, "lease-predict")
        again = await class_session.predict(tab, run, "lease-predict", ["P4", "P5"])
        await tab.close()
        return run, again, dict(jar)

    async def held_open() -> StreamlitSession:
        tab = await StreamlitSession.open(hall.url, TIMEOUT, jar)
        await class_session.open_exercise(tab, class_id, token, "lease-predict")
        return tab

    async def broken(tab: StreamlitSession) -> bool:
        try:
            await tab.open_page("exercises", class_session.student_link(class_id, token, "x"))
        except SessionBroken:
            return True
        return False

    loop = asyncio.new_event_loop()
    with ThreadPoolExecutor(max_workers=1) as thread:  # one loop, on a thread of its own

        def run(coroutine: Any) -> Any:
            return thread.submit(loop.run_until_complete, coroutine).result()

        try:
            open_tab = run(held_open())
            os.kill(hall.pids[home], signal.SIGKILL)
            assert run(broken(open_tab))  # the page lost its server
            shown, answered, cookies = run(reconnect())
        finally:
            thread.submit(loop.close).result()
    assert cookies[proxy.COOKIE] == f"p{away}"  # sent to the other process
    alerts = " ".join(e.alert.body for e in shown.elements if e.WhichOneof("type") == "alert")
    assert "Not quite" in alerts  # the answer given on the killed process is there
    assert class_session.graded(answered)
    assert hall.answers_in_the_database(class_id) == [
        (token, "lease-predict", "P1"),
        (token, "lease-predict", "P4, P5"),
    ]
    hall.wait_for(lambda: said(hall, f"server process {home} started again"), 60)
    assert said(hall, f"server process {home} was killed by SIGKILL")
    hall.wait_for(lambda: said(hall, f"server process {home} is in service again"), 180)
    assert healthy("127.0.0.1", hall.ports[home])


def test_the_dashboard_counts_students_of_both_processes(hall: RunningHall) -> None:
    async def scenario() -> tuple[set[str], list[str]]:
        teacher = await StreamlitSession.open(hall.url, TIMEOUT, {})
        class_id, key = await class_session.create_class(teacher, "Two processes")
        homes = set()
        tabs = []
        for number in range(4):  # new browsers go where fewer pages are open
            jar: dict[str, str] = {}
            tab = await StreamlitSession.open(hall.url, TIMEOUT, jar)
            token, run = await class_session.join_class(tab, class_id, f"s{number}")
            run = await class_session.open_exercise(tab, class_id, token, "lease-predict")
            await class_session.predict(tab, run, "lease-predict", ["P1"])
            homes.add(jar[proxy.COOKIE])
            tabs.append(tab)
        dashboard = await teacher.open_page("class", f"class={class_id}&key={key}")
        for tab in [teacher, *tabs]:
            await tab.close()
        values = [e.metric.body for e in dashboard.elements if e.WhichOneof("type") == "metric"]
        return homes, values

    hall.wait_for(lambda: all(in_service(hall, index) for index in hall.ports), 180)
    homes, metrics = run_async(scenario())
    assert homes == {"p1", "p2"}
    assert metrics[:4] == ["4", "4", "0", "4"]  # joined, tried, solved, answers


def test_a_class_outlives_a_restart_of_the_whole_server(hall: RunningHall) -> None:
    class_id, _, token, _, _ = run_async(_student_answers(hall))
    assert hall.stop() == 0
    assert any("Stopping the class server" in line for line in hall.lines)
    assert all(not Path(f"/proc/{pid}").exists() for pid in hall.pids.values())
    hall.start()

    async def reopen() -> Run:
        tab = await StreamlitSession.open(hall.url, TIMEOUT, {})
        run = await class_session.open_exercise(tab, class_id, token, "lease-predict")
        await tab.close()
        return run

    shown = run_async(reopen())
    alerts = " ".join(e.alert.body for e in shown.elements if e.WhichOneof("type") == "alert")
    assert "Not quite" in alerts
    assert hall.answers_in_the_database(class_id) == [(token, "lease-predict", "P1")]


# ----- the parts, without starting anything ---------------------------------------------------


def test_the_proxy_configuration_is_valid_and_says_what_it_must(tmp_path: Path) -> None:
    backends = [proxy.Backend("p1", 40001), proxy.Backend("p2", 40002)]
    text = proxy.configuration("0.0.0.0", 8501, backends, tmp_path / "haproxy.sock")
    config = tmp_path / "haproxy.cfg"
    config.write_text(text)
    checked = subprocess.run(
        [proxy.program(), "-c", "-q", "-f", str(config)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr
    for needed in (
        "bind 0.0.0.0:8501",
        f"cookie {proxy.COOKIE} insert",
        "option httpchk GET /_stcore/health",
        "option redispatch",
        "retry-on conn-failure empty-response",
        "balance leastconn",
        "timeout tunnel",
        "server p1 127.0.0.1:40001 check cookie p1",
        "server p2 127.0.0.1:40002 check cookie p2",
    ):
        assert needed in text


def test_the_database_folder_must_be_reachable_by_postgres() -> None:
    """PostgreSQL runs as another user when the server runs as root: every folder above its
    data must let that user through."""
    nobody = 65534
    folder = Path(tempfile.mkdtemp())  # private (0700), in the temporary folder
    try:
        assert not reachable_by(folder / "postgres", nobody, nobody)
        os.chmod(folder, 0o711)
        assert reachable_by(folder / "postgres", nobody, nobody)
        assert reachable_by(folder / "postgres", os.geteuid(), os.getegid())
    finally:
        folder.rmdir()
