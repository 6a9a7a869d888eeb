"""A real `streamlit run` server under many proof requests at once: every page ends with
its proof or the clear busy message, the server stays up and answers afterwards, a visitor
who leaves frees the slot and ends the proof's process, and SIGTERM stops the server with
its proofs running.

The visitors are protocol-level tabs (bench/streamlit_client.py): each opens a proofs link
with `run=1` over Streamlit's own websocket, as a browser tab does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from bench.streamlit_client import Run, SessionBroken, StreamlitSession
from lab.processes import ENDED, process_state
from model.properties import PROPERTY_NAMES
from tests.servers import app_flags, children_of, free_port, healthy
from webapp.content.busy import busy_sentence
from webapp.jobs.slots import HEAVY_AT_ONCE

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS: Final = 60.0
PAGE_TIMEOUT: Final = 120.0
"""Generous bound on one page's run (catches a hang, not a timing)."""
SMALL: Final = "workers=2&lease=2&horizon=5&grants=2&writes=1&run=1"
WIDE: Final = "workers=5&lease=12&horizon=30&grants=8&writes=4&run=1"
"""The widest bounds a link may ask for: a proof that takes most of its time budget."""
PRESETS: Final = (
    "lease-only",
    "fencing",
    "random-token",
    "fencing-strict",
    "nonatomic-receiver",
    "volatile-hwm",
    "key-version-token",
    "local-clock-token",
    "wrapping-counter",
    "first-writer-wins",
    "grant-fences",
    "rmw-fencing-fenced-reads",
)
BUSY: Final = busy_sentence("z3's proof")


@dataclass(frozen=True)
class Server:
    """A running `streamlit run` of the app."""

    process: subprocess.Popen[bytes]
    url: str


def _start(log: Path) -> Server:
    """`streamlit run webapp/app.py` (the console script, as `make run` starts it)."""
    port = free_port()
    script = Path(sys.executable).with_name("streamlit")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "streamlit"]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*command, *app_flags(port)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    ends = time.monotonic() + STARTUP_SECONDS
    while not healthy(url):
        if process.poll() is not None or time.monotonic() > ends:
            _stop(process)
            pytest.fail(f"streamlit did not become healthy: {log.read_text()[-2000:]}")
        time.sleep(0.3)
    return Server(process, url)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server by its pid (killed if it does not stop on SIGTERM)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module's tests."""
    started = _start(tmp_path_factory.mktemp("server") / "streamlit.log")
    try:
        yield started
    finally:
        _stop(started.process)


def _proof_jobs(server_pid: int) -> list[int]:
    """The proof jobs running for a server: the children of its children (the fork server's)."""
    return [job for child in children_of(server_pid) for job in children_of(child)]


def _running(pid: int) -> bool:
    """Whether a process exists and has not ended (a zombie has ended)."""
    return process_state(pid) not in ENDED


def _wait_until(condition: object, seconds: float) -> bool:
    """Whether `condition()` becomes true within `seconds`."""
    assert callable(condition)
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def _texts(run: Run) -> list[str]:
    """Every Markdown and alert text the run drew."""
    texts = []
    for element in run.elements:
        kind = element.WhichOneof("type")
        if kind in ("markdown", "alert"):
            texts.append(str(getattr(element, kind).body))
    return texts


def _ending(run: Run) -> str:
    """How a proofs page ended: "proof" (the table and P1..P5), "busy", or what it drew."""
    texts = _texts(run)
    kinds = {element.WhichOneof("type") for element in run.elements}
    headings = [t for t in texts if t.startswith("#### P")]
    if "table" in kinds and len(headings) == len(PROPERTY_NAMES):
        return "proof"
    if any(t.replace("\\", "") == BUSY for t in texts):
        return "busy"
    return f"neither: errors {run.errors}, texts {texts[-3:]}"


async def _open(server: Server, query: str) -> Run:
    """One fresh tab opening the proofs page with a query string."""
    tab = await StreamlitSession.open(server.url.replace("http", "ws", 1), PAGE_TIMEOUT)
    try:
        return await tab.open_page("proofs", query)
    finally:
        await tab.close()


async def _open_all(server: Server, queries: list[str]) -> list[Run]:
    """Every link opened at the same moment, each in its own tab."""
    return await asyncio.gather(*(_open(server, q) for q in queries))


def _fork_servers(server_pid: int) -> list[int]:
    """The server's children that are the proof jobs' fork server."""
    return [
        pid
        for pid in children_of(server_pid)
        if b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]


def test_the_proofs_page_starts_the_fork_server_before_any_proof(server: Server) -> None:
    """Opening the page without running the prover starts the fork server (once), so the
    first proof does not wait for it; no proof job runs."""
    assert _fork_servers(server.process.pid) == []
    for _ in range(2):
        run = asyncio.run(_open(server, "preset=fencing"))
        assert run.errors == () and "Switch on to run z3" in " ".join(_texts(run))
    assert _wait_until(lambda: len(_fork_servers(server.process.pid)) == 1, 10)
    assert _proof_jobs(server.process.pid) == []


def test_twelve_proof_links_at_once_end_in_a_result_or_the_busy_message(server: Server) -> None:
    """12 different designs proved at once: each page shows its proof or the busy message,
    none shows an error, the server lives on and answers a fresh page afterwards."""
    started = time.monotonic()
    runs = asyncio.run(_open_all(server, [f"preset={name}&{SMALL}" for name in PRESETS]))
    endings = [_ending(run) for run in runs]
    assert all(e in ("proof", "busy") for e in endings), endings
    assert endings.count("proof") >= HEAVY_AT_ONCE, endings
    assert all(run.errors == () for run in runs)
    print(
        f"12 at once: {endings.count('proof')} proved, {endings.count('busy')} busy, "
        f"{time.monotonic() - started:.1f} s"
    )
    assert server.process.poll() is None
    assert _wait_until(lambda: _proof_jobs(server.process.pid) == [], 10)
    again = asyncio.run(_open(server, f"preset=fencing&{SMALL}"))
    assert _ending(again) == "proof" and again.seconds < PAGE_TIMEOUT


async def _visit_until(server: Server, query: str, leave: asyncio.Event) -> None:
    """A tab that opens a proof link and is closed when told to (or when the server goes)."""
    tab = await StreamlitSession.open(server.url.replace("http", "ws", 1), PAGE_TIMEOUT)
    page = asyncio.ensure_future(tab.open_page("proofs", query))
    told = asyncio.ensure_future(leave.wait())
    try:
        await asyncio.wait([page, told], return_when=asyncio.FIRST_COMPLETED)
    finally:
        told.cancel()
        page.cancel()
        with contextlib.suppress(asyncio.CancelledError, SessionBroken):
            await page
        await tab.close()


async def _two_long_proofs(server: Server, leave_when_running: bool) -> int:
    """Two visitors start long proofs; once both jobs run, they leave if told to, else stay
    until the server goes. How many jobs were seen running at once."""
    leave = asyncio.Event()
    links = [f"preset={name}&{WIDE}" for name in ("fencing", "lease-only")]
    visits = asyncio.gather(*(_visit_until(server, link, leave) for link in links))
    seen = 0
    ends = time.monotonic() + 30
    while seen < 2 and time.monotonic() < ends:
        await asyncio.sleep(0.1)
        seen = max(seen, len(_proof_jobs(server.process.pid)))
    if leave_when_running or seen < 2:
        leave.set()
    await visits
    return seen


def test_a_visitor_who_leaves_frees_the_slot_and_ends_the_proof(server: Server) -> None:
    """Two long proofs take both slots; their tabs close; their jobs end at once (not at their
    deadline) and a new visitor's proof is admitted straight away and proved."""
    assert asyncio.run(_two_long_proofs(server, leave_when_running=True)) == 2
    left = time.monotonic()
    assert _wait_until(lambda: _proof_jobs(server.process.pid) == [], 5), "a job outlived its tab"
    print(f"jobs ended {time.monotonic() - left:.2f} s after their tabs closed")
    fresh = asyncio.run(_open(server, f"preset=random-token&{SMALL}"))
    assert _ending(fresh) == "proof"
    assert not any(t.startswith("Waiting for a free slot") for t in _texts(fresh))
    assert server.process.poll() is None


def test_sigterm_stops_the_server_and_its_proofs_while_they_run(tmp_path: Path) -> None:
    """SIGTERM with two long proofs running: the server exits promptly, no proof survives."""
    own = _start(tmp_path / "streamlit.log")
    seen: list[int] = []
    visitors = threading.Thread(
        target=lambda: seen.append(asyncio.run(_two_long_proofs(own, leave_when_running=False)))
    )
    try:
        visitors.start()
        assert _wait_until(lambda: len(_proof_jobs(own.process.pid)) == 2, 30)
        jobs = _proof_jobs(own.process.pid)
        signalled = time.monotonic()
        own.process.send_signal(signal.SIGTERM)
        own.process.wait(timeout=15)
        print(f"server exited {time.monotonic() - signalled:.2f} s after SIGTERM")
        assert _wait_until(lambda: not any(_running(job) for job in jobs), 10)
        visitors.join(timeout=60)
        assert seen == [2]
    finally:
        _stop(own.process)
