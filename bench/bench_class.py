"""A class of students against the real web app server: latency per interaction, CPU, memory.

Run: `python bench/bench_class.py [--sessions 30]` from the repository root (`make bench`
runs it with the defaults; `make bench-class SESSIONS=N` runs only this one). It prints
figures and whether they meet the targets; it asserts nothing.

The server is the real one, `streamlit run webapp/app.py` with the settings of
`make serve-class`, started here on a free localhost port as a child process that is
always stopped (on errors, Ctrl-C and SIGTERM too; the kernel stops it if this process
dies).

The students are protocol-level clients (`bench/streamlit_client.py`), not browsers: a
browser per student would eat the two cores the server is measured on. Each one speaks
Streamlit's own websocket protocol, protobuf `BackMsg`/`ForwardMsg` on `/_stcore/stream`,
as a browser tab does: a page is a `rerun_script` request with the query string and the
page, a click is a rerun with the button's trigger set, widget ids are read from the
previous run's element deltas, the query string the app writes comes back with the next
request, and large messages are cached and referred to by hash. The server does the same
page work for it as for a browser (it runs the page script and sends every element); the
client draws nothing and fetches none of the static files, which a browser loads once and
caches. One interaction is timed from sending its `BackMsg` to receiving `script_finished`.

The class flow of one student, each step one timed interaction:

1. open walkthrough chapter 1 (`/chapter-1?step=0`, a fresh tab) and press Next five times
   (the player's `…-next` button; each press must move `step` in the URL by one);
2. follow a link to Explore with a preset (`/explore?preset=lease-only&run=1`): a link is a
   page load, so a fresh tab (session) opens it; the explorer's results must be drawn;
3. through the menu (same tab), open Compare and click a violated cell of the matrix: the
   dataframe's cell selection is sent as the browser sends it (a JSON `string_value` with
   `cells: [[row, column]]`), the cell chosen at random among the violated ones read from
   the table's Arrow data; its counterexample must open (`cell=` in the URL);
4. through the menu, open Be the scheduler and click three enabled action buttons (chosen at
   random, `play-…` keys), each of which must add its action to the run in the URL.

A run that draws an exception, a failed check, a missing widget or a timeout counts as an
error; a student stops at its first broken session. Choices are random but seeded per
student, so runs are repeatable and students still differ.

Rounds: first one student on the freshly started server (the cold first visit: every cache
empty), which also warms the caches as a class would find them; then one student doing the
flow three times (target: p95 under 0.2 s for Next and a scheduler click); then the class,
N students at once (default 30; target: p95 under 1 s and no errors). Students start 0.1 s
apart (the whole class within a few seconds, as when a teacher says "open the link now")
and do not pause between clicks (`--think` adds a pause): the heaviest load a class makes,
so a real class sees these figures or better. Percentiles are nearest-rank.

Server figures per round, from `/proc/<pid>/stat` and `/proc/<pid>/status` of the server:
CPU seconds (user + system, all threads) per script run served, and peak resident memory
(VmHWM, since the server started). The machine's load average is printed too: the two
cores are shared, and other processes competing with the server show up as latency.
`--profile FILE` samples the server with py-spy during the class round (when py-spy is
installed) and prints the functions it spends the most time in; `--option NAME=VALUE` passes
a Streamlit setting to the server, to measure what the setting changes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import parse_qs

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import pyarrow as pa  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from streamlit_client import Run, SessionBroken, StreamlitSession, Widget, buttons  # noqa: E402

OPEN_CHAPTER: Final = "open chapter 1"
NEXT: Final = "chapter Next"
OPEN_EXPLORE: Final = "open Explore (preset link)"
OPEN_COMPARE: Final = "open Compare"
MATRIX_CELL: Final = "click a matrix cell"
OPEN_SCHEDULER: Final = "open Be the scheduler"
SCHEDULER_CLICK: Final = "scheduler click"
INTERACTIONS: Final = (
    OPEN_CHAPTER,
    NEXT,
    OPEN_EXPLORE,
    OPEN_COMPARE,
    MATRIX_CELL,
    OPEN_SCHEDULER,
    SCHEDULER_CLICK,
)
TARGETED: Final = (NEXT, SCHEDULER_CLICK)
"""The interactions the targets speak of."""

CLASS_TARGET_S: Final = 1.0
SOLO_TARGET_S: Final = 0.2
CLASS_SIZE: Final = 30
NEXT_PRESSES: Final = 5
SCHEDULER_CLICKS: Final = 3
SOLO_FLOWS: Final = 3
EXPLORE_LINK: Final = "preset=lease-only&run=1"
VIOLATED: Final = "✘"
COLD_TIMEOUT_S: Final = 300.0
STARTUP_TIMEOUT_S: Final = 90.0
PR_SET_PDEATHSIG: Final = 1
APP_FOLDERS: Final = ("webapp", "model", "fencing")
"""Folders of the project's own code, for the profile summary."""


# ----- the server ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """The app server this benchmark started: its process id, port and log file."""

    pid: int
    port: int
    log: Path

    @property
    def url(self) -> str:
        """The websocket base address."""
        return f"ws://127.0.0.1:{self.port}"


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    """In the child: have the kernel stop it when the benchmark dies, however it dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _wait_healthy(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Wait until the server answers its health check; fail with its log if it exits."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    url = f"http://127.0.0.1:{port}/_stcore/health"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited at start:\n{log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as answer:
            if answer.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {STARTUP_TIMEOUT_S:g} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server: SIGTERM, then SIGKILL if it has not exited after 10 s."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def app_server(folder: Path, options: Sequence[str] = ()) -> Iterator[Server]:
    """`streamlit run webapp/app.py` as `make serve-class` runs it, on a free local port.

    `options` are extra Streamlit settings as `name=value` (e.g. `runner.postScriptGC=false`),
    to measure what a setting changes.
    """
    port = free_port()
    log = folder / "server.log"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "webapp/app.py",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    for option in options:
        name, _, value = option.partition("=")
        command += [f"--{name}", value]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the benchmark, which stops the server
            preexec_fn=_die_with_parent,
        )
    try:
        _wait_healthy(process, port, log)
        yield Server(pid=process.pid, port=port, log=log)
    finally:
        _stop(process)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of a process so far (all its threads)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def peak_memory_mb(pid: int) -> float:
    """Peak resident memory of a process (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 1e6
    return math.nan


def log_problems(log: Path) -> list[str]:
    """Lines of the server log that report an error or a traceback."""
    markers = ("Traceback", "Uncaught app", "ERROR", "Error processing")
    lines = log.read_text(errors="replace").splitlines()
    return [line for line in lines if any(marker in line for marker in markers)]


# ----- one student ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One interaction: how long it took (None when it never finished) and what went wrong."""

    interaction: str
    seconds: float | None
    errors: tuple[str, ...]
    script_runs: int


@dataclass(frozen=True)
class Plan:
    """How the students of a round behave: timeout per interaction, pauses, random seed."""

    timeout: float
    think: float
    stagger: float
    seed: int


class FlowStopped(Exception):
    """The student cannot go on; the error that stopped it is already recorded."""


Check = Callable[[Run], str | None]


@dataclass
class Student:
    """One student: the samples it took, the flows it completed, its own random choices."""

    index: int
    plan: Plan
    samples: list[Sample] = field(default_factory=list)
    flows_done: int = 0
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        """A random generator per student, seeded so every run of the bench is the same."""
        self.rng = random.Random(self.plan.seed * 1_000 + self.index)

    def fail(self, interaction: str, problem: str) -> FlowStopped:
        """Record an interaction that could not be made; the flow stops."""
        self.samples.append(Sample(interaction, None, (problem,), 0))
        return FlowStopped(problem)

    async def record(self, interaction: str, request: Awaitable[Run], check: Check) -> Run:
        """Make one timed request, record its time and its errors (and the check's)."""
        try:
            run = await request
        except SessionBroken as error:
            raise self.fail(interaction, str(error)) from None
        errors = list(run.errors)
        if (problem := check(run)) is not None:
            errors.append(problem)
        self.samples.append(Sample(interaction, run.seconds, tuple(errors), run.script_runs))
        if self.plan.think:
            await asyncio.sleep(self.plan.think)
        return run

    async def open_tab(self, url: str, interaction: str) -> StreamlitSession:
        """A new session, as a new tab or a page load makes."""
        try:
            return await StreamlitSession.open(url, self.plan.timeout)
        except Exception as error:  # refused, timed out or a bad handshake
            raise self.fail(interaction, f"cannot connect: {type(error).__name__}") from None


def url_param(run: Run, name: str) -> str | None:
    """One parameter of the query string the page has after a run."""
    values = parse_qs(run.query_string).get(name)
    return values[0] if values else None


def expect_param(name: str, value: str) -> Check:
    """A check that the page's URL holds `name=value` after the run."""

    def check(run: Run) -> str | None:
        found = url_param(run, name)
        return None if found == value else f"expected {name}={value} in the URL, found {found}"

    return check


def drew_explorer_results(run: Run) -> str | None:
    """Explore with `run=1` must show the exploration's counts."""
    metrics = [e.metric.label for e in run.elements if e.WhichOneof("type") == "metric"]
    return None if "states" in metrics else "Explore drew no exploration results"


def drew_matrix(run: Run) -> str | None:
    """Compare must draw the verdict matrix as a selectable table."""
    try:
        run.widget("matrix_table", "dataframe")
    except LookupError as error:
        return str(error)
    return None


def drew_actions(run: Run) -> str | None:
    """Be the scheduler must offer at least one action button."""
    return None if buttons(run, "play-") else "no scheduler action button was drawn"


def violated_cells(run: Run, widget: Widget) -> list[tuple[int, str, str]]:
    """Every violated cell of the matrix as (row, column, design), read from its Arrow data."""
    element = next(e for e in run.elements if e.dataframe.id == widget.id)
    table = pa.ipc.open_stream(element.dataframe.arrow_data.data).read_all()
    return [
        (row_index, column, str(row.get("design")))
        for row_index, row in enumerate(table.to_pylist())
        for column, value in row.items()
        if isinstance(value, str) and value.startswith(VIOLATED)
    ]


async def chapter_flow(student: Student, url: str) -> None:
    """Open chapter 1 in a new tab and press Next five times."""
    tab = await student.open_tab(url, OPEN_CHAPTER)
    try:
        run = await student.record(
            OPEN_CHAPTER, tab.open_page("chapter-1", "step=0"), expect_param("step", "0")
        )
        for press in range(1, NEXT_PRESSES + 1):
            found = [w for w in run.widgets if w.kind == "button" and _is_next(w.key)]
            if len(found) != 1:
                raise student.fail(NEXT, f"expected one Next button, found {len(found)}")
            run = await student.record(NEXT, tab.click(found[0]), expect_param("step", str(press)))
    finally:
        await close_quietly(tab)


async def close_quietly(tab: StreamlitSession) -> None:
    """Close a tab; a connection that already broke is closed anyway."""
    with contextlib.suppress(Exception):
        await tab.close()


def _is_next(key: str | None) -> bool:
    """Whether a widget key is the step player's Next button (`{key}-next`)."""
    return key is not None and key.endswith("-next")


async def tools_flow(student: Student, url: str) -> None:
    """Follow the Explore link in a new tab, then Compare and Be the scheduler via the menu."""
    tab = await student.open_tab(url, OPEN_EXPLORE)
    try:
        await student.record(
            OPEN_EXPLORE, tab.open_page("explore", EXPLORE_LINK), drew_explorer_results
        )
        run = await student.record(OPEN_COMPARE, tab.open_page("compare"), drew_matrix)
        try:
            table = run.widget("matrix_table", "dataframe")
            cells = violated_cells(run, table)
        except (LookupError, pa.ArrowException) as error:
            raise student.fail(MATRIX_CELL, f"cannot read the matrix: {error}") from None
        if not cells:
            raise student.fail(MATRIX_CELL, "the matrix shows no violated cell")
        row, column, design = student.rng.choice(cells)
        selection = {"selection": {"rows": [], "columns": [], "cells": [[row, column]]}}
        click = WidgetState(id=table.id, string_value=json.dumps(selection))
        await student.record(
            MATRIX_CELL, tab.change(click), expect_param("cell", f"{design} · {column}")
        )
        run = await student.record(OPEN_SCHEDULER, tab.open_page("playground"), drew_actions)
        for _ in range(SCHEDULER_CLICKS):
            choices = buttons(run, "play-")
            if not choices:
                raise student.fail(SCHEDULER_CLICK, "no scheduler action button to click")
            button = student.rng.choice(choices)
            code = (button.key or "").removeprefix("play-")
            run = await student.record(SCHEDULER_CLICK, tab.click(button), added_action(code))
    finally:
        await close_quietly(tab)


def added_action(code: str) -> Check:
    """A check that the run in the URL now ends with the clicked action."""

    def check(run: Run) -> str | None:
        actions = (url_param(run, "a") or "").split(".")
        return None if actions[-1] == code else f"the run in the URL does not end with {code}"

    return check


async def attend(student: Student, url: str, flows: int) -> None:
    """Arrive (staggered), then go through the class flow a number of times."""
    await asyncio.sleep(student.index * student.plan.stagger)
    try:
        for _ in range(flows):
            await chapter_flow(student, url)
            await tools_flow(student, url)
            student.flows_done += 1
    except FlowStopped:
        return
    except Exception as error:  # a fault of this benchmark: counted, and the class goes on
        student.samples.append(Sample("benchmark fault", None, (repr(error)[:200],), 0))


# ----- a round --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """A round's samples and the server's figures over it."""

    title: str
    sessions: int
    flows: int
    samples: tuple[Sample, ...]
    stopped: int
    server_cpu: float
    wall: float
    client_cpu: float
    peak_mb: float
    load: float

    def seconds(self, interaction: str) -> list[float]:
        """Times of the finished samples of one interaction."""
        found = (s.seconds for s in self.samples if s.interaction == interaction)
        return [seconds for seconds in found if seconds is not None]

    @property
    def failed(self) -> list[Sample]:
        """Samples with at least one error."""
        return [s for s in self.samples if s.errors]

    @property
    def script_runs(self) -> int:
        """Script runs the server served in this round."""
        return sum(s.script_runs for s in self.samples)


async def play_round(server: Server, title: str, sessions: int, flows: int, plan: Plan) -> Round:
    """Have `sessions` students go through the flow at once; measure the server meanwhile."""
    load = os.getloadavg()[0]
    cpu_before, client_before = cpu_seconds(server.pid), time.process_time()
    started = time.perf_counter()
    students = [Student(index, plan) for index in range(sessions)]
    await asyncio.gather(*(attend(student, server.url, flows) for student in students))
    return Round(
        title=title,
        sessions=sessions,
        flows=flows,
        samples=tuple(s for student in students for s in student.samples),
        stopped=sum(student.flows_done < flows for student in students),
        server_cpu=cpu_seconds(server.pid) - cpu_before,
        wall=time.perf_counter() - started,
        client_cpu=time.process_time() - client_before,
        peak_mb=peak_memory_mb(server.pid),
        load=load,
    )


# ----- figures --------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (the smallest value with at least `fraction` at or below it)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def print_table(result: Round) -> None:
    """Samples, p50, p95, max and errors per interaction."""
    print(f"  {'interaction':<28}{'n':>5}{'p50 s':>9}{'p95 s':>9}{'max s':>9}{'errors':>8}")
    for interaction in INTERACTIONS:
        times = result.seconds(interaction)
        errors = sum(1 for s in result.failed if s.interaction == interaction)
        if not times and not errors:
            continue
        print(
            f"  {interaction:<28}{len(times):>5}{percentile(times, 0.5):>9.3f}"
            f"{percentile(times, 0.95):>9.3f}{max(times, default=math.nan):>9.3f}{errors:>8}"
        )


def print_errors(result: Round) -> None:
    """How many interactions failed, and the distinct reasons."""
    reasons = Counter(f"{s.interaction}: {e}" for s in result.failed for e in s.errors)
    stopped = f"; {result.stopped} of {result.sessions} students stopped early"
    print(f"  errors: {len(result.failed)} interactions{stopped if result.stopped else ''}")
    for reason, count in reasons.most_common(8):
        print(f"    {count}x {reason}")


def print_server(result: Round) -> None:
    """CPU per script run, cores busy, peak memory, and the client's own CPU."""
    runs = result.script_runs
    per_run = result.server_cpu / runs if runs else math.nan
    print(
        f"  server: {per_run:.3f} s CPU per script run ({runs} runs, {result.server_cpu:.1f} s "
        f"CPU in {result.wall:.1f} s = {result.server_cpu / result.wall:.2f} cores busy); "
        f"peak memory {result.peak_mb:.0f} MB (VmHWM)"
    )
    print(
        f"  this client used {result.client_cpu:.1f} s CPU; machine load average "
        f"{result.load:.2f} on {os.cpu_count()} cores when the round started"
    )


def print_targets(result: Round, target: float) -> bool:
    """Whether p95 of Next and of a scheduler click is under the target, with no error."""
    verdicts = []
    for interaction in TARGETED:
        p95 = percentile(result.seconds(interaction), 0.95)
        met = p95 < target
        verdicts.append(met)
        print(f"  target p95 < {target:g} s, {interaction}: {p95:.3f} s, {_met(met)}")
    clean = not result.failed
    print(f"  target no errors: {len(result.failed)}, {_met(clean)}")
    return all(verdicts) and clean


def _met(met: bool) -> str:
    """A verdict word that stands out when the target is missed."""
    return "met" if met else "NOT MET"


def print_capacity(result: Round) -> None:
    """What one server process serves at this round's CPU cost per script run.

    The server runs every session's page script in one Python process, one thread at a time
    (the GIL), so it uses about one core however many the machine has.
    """
    if not result.script_runs or not result.server_cpu:
        return
    per_run = result.server_cpu / result.script_runs
    print(
        f"  capacity: one server process uses about one core (its Python runs one thread at a "
        f"time),\n  so it serves about {1 / per_run:.0f} script runs a second: about "
        f"{5 / per_run:.0f} students each clicking every 5 s;\n  {result.sessions} students "
        f"clicking at the same moment each wait about {result.sessions * per_run:.1f} s"
    )


def print_round(result: Round, target: float | None) -> bool:
    """The whole report of a round; returns whether its targets are met (True without)."""
    flows = f", {result.flows} flows each" if result.flows > 1 else ""
    print(f"\n{result.title}: {result.sessions} session(s){flows}, {result.wall:.1f} s")
    print_table(result)
    print_errors(result)
    print_server(result)
    return print_targets(result, target) if target is not None else True


# ----- profiling ------------------------------------------------------------------------------


def py_spy() -> str | None:
    """The py-spy program, when installed (in this environment or on the PATH)."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


@contextlib.contextmanager
def profiled(server: Server, output: Path | None) -> Iterator[bool]:
    """Sample the server with py-spy while the block runs; yields whether it does.

    Only the thread holding the GIL is sampled (`--gil`): the server runs every session's
    script in one process, so a thread waiting for the GIL shows where it waits, not what
    costs, and would blur the picture.
    """
    program = py_spy() if output else None
    if output is None or program is None:
        if output is not None:
            print("  (py-spy is not installed, so no profile: `pip install py-spy` adds it)")
        yield False
        return
    command = [program, "record", "--pid", str(server.pid), "--output", str(output)]
    command += ["--format", "raw", "--rate", "50", "--nonblocking", "--gil"]
    with (server.log.parent / "py-spy.log").open("wb") as sink:
        sampler = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        yield True
    finally:
        sampler.send_signal(signal.SIGINT)
        try:
            sampler.wait(timeout=30)
        except subprocess.TimeoutExpired:
            sampler.kill()
            sampler.wait()


def read_stacks(output: Path) -> list[tuple[list[str], int]]:
    """py-spy's raw output: each distinct stack (outermost frame first) and its samples."""
    stacks = []
    for line in output.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks.append((stack.split(";"), int(count)))
    return stacks


def _in_app(frame: str) -> bool:
    """Whether a py-spy frame (`function (path:line)`) is in the project's own code."""
    return any(f"({folder}/" in frame for folder in APP_FOLDERS)


def print_profile(output: Path) -> None:
    """Where the server's GIL time went: the page scripts' share, then the top functions."""
    stacks = read_stacks(output) if output.exists() else []
    total = sum(count for _, count in stacks)
    if not total:
        print(f"\n  py-spy recorded no samples in {output}")
        return
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    script = 0
    for frames, count in stacks:
        own[frames[-1]] += count
        for frame in set(frames):
            if _in_app(frame):
                inclusive[frame] += count
        script += count * any(_in_app(frame) for frame in frames)
    print(f"\n  py-spy profile of the server while it held the GIL ({total} samples, in {output})")
    print(f"  in the app's own code: {script / total:.0%}; the rest is the server around it")
    print("  most samples in the function itself:")
    for frame, count in own.most_common(12):
        print(f"    {count / total:6.1%}  {frame[:110]}")
    print("  most samples inside the app's functions (inclusive):")
    for frame, count in inclusive.most_common(12):
        print(f"    {count / total:6.1%}  {frame[:110]}")


# ----- main -------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        description="A class of students against the real web app server: latency per "
        "interaction, errors, server CPU per script run and peak memory, against the targets."
    )
    parser.add_argument(
        "--sessions", type=int, default=CLASS_SIZE, help="students at once (default 30)"
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds one interaction may take (60)"
    )
    parser.add_argument(
        "--think", type=float, default=0.0, help="seconds a student pauses after each click (0)"
    )
    parser.add_argument(
        "--stagger", type=float, default=0.1, help="seconds between students' arrivals (0.1)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the students' choices")
    parser.add_argument(
        "--profile", type=Path, help="sample the server with py-spy during the class round"
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an extra Streamlit setting for the server, e.g. runner.postScriptGC=false",
    )
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.timeout <= 0 or args.think < 0 or args.stagger < 0:
        parser.error("--sessions must be at least 1, --timeout positive, pauses not negative")
    for option in args.option:
        name, sep, value = option.partition("=")
        if not sep or not name or not value or not name.replace(".", "").isalnum():
            parser.error(f"--option takes NAME=VALUE such as runner.postScriptGC=false: {option!r}")
    return args


def _interrupted(signum: int, frame: object) -> None:
    """SIGTERM ends the benchmark as Ctrl-C does, so the server is stopped on the way out."""
    raise KeyboardInterrupt


def measure(args: argparse.Namespace, server: Server) -> bool:
    """The three rounds and their reports; returns whether every target is met."""
    plan = Plan(timeout=args.timeout, think=args.think, stagger=args.stagger, seed=args.seed)
    cold_plan = Plan(timeout=COLD_TIMEOUT_S, think=0.0, stagger=0.0, seed=args.seed)
    cold = asyncio.run(play_round(server, "Cold first visit (every cache empty)", 1, 1, cold_plan))
    print_round(cold, None)
    solo = asyncio.run(play_round(server, "One student", 1, SOLO_FLOWS, plan))
    met = print_round(solo, SOLO_TARGET_S)
    if args.sessions > 1:
        with profiled(server, args.profile) as profiling:
            title = "A class" + ("" if args.sessions == CLASS_SIZE else " (targets set for 30)")
            crowd = asyncio.run(play_round(server, title, args.sessions, 1, plan))
        met = print_round(crowd, CLASS_TARGET_S) and met
        print_capacity(crowd)
        if profiling and args.profile is not None:
            print_profile(args.profile)
    return met


def main(argv: Sequence[str] | None = None) -> None:
    """Start the server, play the rounds, print the figures, stop the server."""
    args = parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _interrupted)
    print("Class benchmark: protocol-level sessions against `streamlit run webapp/app.py`")
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-class-") as folder,
            app_server(Path(folder), args.option) as server,
        ):
            settings = f"; extra settings: {', '.join(args.option)}" if args.option else ""
            print(f"  server pid {server.pid} on 127.0.0.1:{server.port}{settings}")
            met = measure(args, server)
            problems = log_problems(server.log)
            print(f"\n  server log: {len(problems)} error or traceback lines")
            for line in problems[:10]:
                print(f"    {line[:160]}")
    except KeyboardInterrupt:
        print("\ninterrupted: the server was stopped", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"\nAll targets {'met' if met else 'NOT met'}.")


if __name__ == "__main__":
    main()
