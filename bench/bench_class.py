"""A class of students against the real server: latency per interaction, errors, answers
kept, CPU per click, memory.

Run: `python bench/bench_class.py [--sessions 30] [--workers N]` from the repository root
(`make bench` runs it with the defaults; `make bench-class SESSIONS=100 WORKERS=2` runs only
this one). It prints figures and whether they meet the targets; it asserts nothing.

The server is the real one, as a teacher starts it, in a temporary folder of its own and
always stopped (on errors, Ctrl-C and SIGTERM too; the kernel stops it if this process
dies): without `--workers`, one Streamlit process with the served settings (`make run`,
`make serve-class`); with `--workers N`, the class server of `make serve-class WORKERS=N`,
N processes behind HAProxy with the classes in PostgreSQL, every student going through the
proxy (`class_servers.py`).

The students are protocol-level clients (`streamlit_client.py`), not browsers: a browser
per student would eat the two cores the server is measured on. Each speaks Streamlit's own
websocket protocol as a browser tab does (the module explains how), keeps its browser's
cookies (so the proxy keeps it on one process), and reruns only the fragment a widget is
drawn in, as the browser does. The server does the same page work for it as for a browser;
the client draws nothing and fetches none of the static files, which a browser loads once
and caches. An interaction is timed from sending its `BackMsg` to receiving
`script_finished`.

A lesson for one student, each step one timed interaction:

1. open walkthrough chapter 1 (`/chapter-1?step=0`, a fresh tab) and press Next five times
   (each press must move `step` in the URL by one);
2. follow a link to Explore with a preset (`/explore?preset=lease-only&run=1`, a fresh
   tab); the explorer's results must be drawn;
3. through the menu, open Compare and click a violated cell of the matrix (sent as the
   browser sends a cell selection); its counterexample must open (`cell=` in the URL);
4. through the menu, open Be the scheduler and click three enabled action buttons (chosen
   at random), each of which must add its action to the run in the URL;
5. open the class's link (a fresh tab), join with a nickname, and answer the set's three
   prediction exercises, each opened with the student's own link (ticks chosen at random);
   each answer must be graded on the page, and is remembered as given.

A teacher created the class through the Class page first and keeps its dashboard open,
which reruns its live part every 3 s as the browser asks it to ("dashboard refresh"). After
the round, the answers the store itself holds for the class (read from SQLite or PostgreSQL,
not through the app) are compared with the answers given: every answer given must be kept,
none added ("answers kept"); and the teacher's dashboard, opened again, must count every
student who joined.

A run that draws an exception, a failed check, a missing widget or a timeout counts as an
error; a student stops at its first broken session. Choices are random but seeded per
student, so runs are repeatable and students still differ.

Rounds: first one student on the freshly started server (the cold first visit: every
cache empty), which also warms the caches as a class would find them; then one student
doing the lesson three times; then the class, N students (default 30), twice: with the
think times a real class has (`--think 1-5`: a pause drawn between 1 and 5 s after each
interaction) and all at once (no pause: the heaviest load a class makes). Students arrive
0.1 s apart (`--stagger`), as when a teacher says "open the link now". Percentiles are
nearest-rank.

Targets: one student, p95 under 0.2 s for Next and a scheduler click; a class of up to 100
with think times, p95 under 1 s for every click (Next, a matrix cell, a scheduler click,
joining, an answer); every round, no error and no answer lost. A larger class has only the
last two: its clicks ask for more than two cores.

The step round: one student alone presses Next six times and Back six times on chapter 1,
120 presses in all, and the server's CPU over them all is divided by the presses (the kernel
counts CPU in 10 ms ticks, so one press's reading is not a fair figure). Target: at most
20 ms of server CPU per press.

Server figures per round, from /proc: CPU seconds of every process of the server (each
Streamlit process with the proof jobs it started, the proxy, the database with its
connections) per interaction, and their memory (peak resident memory of each Streamlit
process and of the proxy, resident memory of the database's processes at the end). With
one student alone on the server, the server's CPU is also read around each interaction, and
the table gives its mean per interaction (a Next's CPU, a scheduler click's). The
machine's load average is printed too: the two cores are shared, and other work on them
shows up as latency. `--profile FILE` samples a Streamlit process with py-spy during the
class round with think times (when py-spy is installed) and prints where it spends its time;
`--option NAME=VALUE` passes a Streamlit setting to the single process, to measure what the
setting changes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
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

import class_session  # noqa: E402
import pyarrow as pa  # noqa: E402
from class_servers import (  # noqa: E402
    Served,
    class_server,
    one_process,
    peak_memory_mb,
    tree_cpu_seconds,
    tree_memory_mb,
)
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from streamlit_client import Run, SessionBroken, StreamlitSession, Widget, buttons  # noqa: E402

OPEN_CHAPTER: Final = "open chapter 1"
NEXT: Final = "chapter Next"
OPEN_EXPLORE: Final = "open Explore (preset link)"
OPEN_COMPARE: Final = "open Compare"
MATRIX_CELL: Final = "click a matrix cell"
OPEN_SCHEDULER: Final = "open Be the scheduler"
SCHEDULER_CLICK: Final = "scheduler click"
OPEN_CLASS: Final = "open the class link"
JOIN: Final = "join the class"
OPEN_EXERCISE: Final = "open an exercise"
ANSWER: Final = "answer (graded)"
DASHBOARD: Final = "dashboard refresh"
INTERACTIONS: Final = (
    OPEN_CHAPTER,
    NEXT,
    OPEN_EXPLORE,
    OPEN_COMPARE,
    MATRIX_CELL,
    OPEN_SCHEDULER,
    SCHEDULER_CLICK,
    OPEN_CLASS,
    JOIN,
    OPEN_EXERCISE,
    ANSWER,
    DASHBOARD,
)
SOLO_TARGETED: Final = (NEXT, SCHEDULER_CLICK)
CLICKS: Final = (NEXT, MATRIX_CELL, SCHEDULER_CLICK, JOIN, ANSWER)
"""The clicks of a lesson, which the class target speaks of (page opens are reported)."""

CLASS_TARGET_S: Final = 1.0
LATENCY_TARGET_UP_TO: Final = 100
"""The largest class the p95 target speaks of: two cores cannot answer every click of a
larger one within a second, and its targets are no error and no answer lost."""
SOLO_TARGET_S: Final = 0.2
STEP_CPU_TARGET_MS: Final = 20.0
"""A chapter's Next or Back costs the server at most this much CPU."""
STEP_PRESSES: Final = 120
"""Next and Back presses the step round measures (the kernel counts CPU in 10 ms ticks:
only the total over many presses is a fair figure for one)."""
STEPS_EACH_WAY: Final = 6
CLASS_SIZE: Final = 30
NEXT_PRESSES: Final = 5
SCHEDULER_CLICKS: Final = 3
SOLO_FLOWS: Final = 3
DASHBOARD_SECONDS: Final = 3.0
"""How often the teacher's dashboard reruns its live part (`webapp.screens.class_page`)."""
EXPLORE_LINK: Final = "preset=lease-only&run=1"
VIOLATED: Final = "✘"
COLD_TIMEOUT_S: Final = 300.0
APP_FOLDERS: Final = ("webapp", "model", "fencing", "classroom")
"""Folders of the project's own code, for the profile summary."""


# ----- one student ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One interaction: how long it took (None when it never finished) and what went wrong."""

    interaction: str
    seconds: float | None
    errors: tuple[str, ...]
    script_runs: int
    server_cpu: float | None = None
    """CPU seconds every process of the server spent meanwhile (measured when one student
    is alone on the server, where they are this interaction's)."""


@dataclass(frozen=True)
class Plan:
    """How the students of a round behave: timeout per interaction, the pause after each
    interaction (drawn between two bounds), arrivals, random seed."""

    timeout: float
    think: tuple[float, float]
    stagger: float
    seed: int


@dataclass(frozen=True)
class Lesson:
    """Where the students go: the server's address, and the class to join (if any)."""

    url: str
    class_id: str = ""


class FlowStopped(Exception):
    """The student cannot go on; the error that stopped it is already recorded."""


Check = Callable[[Run], str | None]


@dataclass
class Student:
    """One student: its browser's cookies, the samples it took, the lessons it completed, the
    answers it gave, its own random choices."""

    index: int
    plan: Plan
    samples: list[Sample] = field(default_factory=list)
    flows_done: int = 0
    cookies: dict[str, str] = field(default_factory=dict)
    given: list[class_session.GivenAnswer] = field(default_factory=list)
    joined: int = 0
    server_cpu: Callable[[], float] | None = None
    """The server's CPU seconds so far, read around each interaction (one student alone)."""
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        """A random generator per student, seeded so every run of the bench is the same."""
        self.rng = random.Random(self.plan.seed * 1_000 + self.index)

    def fail(self, interaction: str, problem: str) -> FlowStopped:
        """Record an interaction that could not be made; the flow stops."""
        self.samples.append(Sample(interaction, None, (problem,), 0))
        return FlowStopped(problem)

    async def think(self) -> None:
        """The pause a person takes before the next click."""
        low, high = self.plan.think
        if high > 0:
            await asyncio.sleep(self.rng.uniform(low, high))

    async def record(self, interaction: str, request: Awaitable[Run], check: Check) -> Run:
        """Make one timed request, record its time and its errors (and the check's)."""
        cpu_before = self.server_cpu() if self.server_cpu is not None else None
        try:
            run = await request
        except SessionBroken as error:
            raise self.fail(interaction, str(error)) from None
        except (class_session.ClassFlowError, LookupError) as error:
            raise self.fail(interaction, str(error)[:200]) from None
        errors = list(run.errors)
        if (problem := check(run)) is not None:
            errors.append(problem)
        cpu = None
        if self.server_cpu is not None and cpu_before is not None:
            cpu = self.server_cpu() - cpu_before
        self.samples.append(Sample(interaction, run.seconds, tuple(errors), run.script_runs, cpu))
        await self.think()
        return run

    async def open_tab(self, url: str, interaction: str) -> StreamlitSession:
        """A new session, as a new tab or a page load makes (with this browser's cookies)."""
        try:
            return await StreamlitSession.open(url, self.plan.timeout, self.cookies)
        except Exception as error:  # refused, timed out or a bad handshake
            raise self.fail(interaction, f"cannot connect: {type(error).__name__}") from None


def _fine(run: Run) -> str | None:
    """No check beyond the run's own errors."""
    return None


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
    return _is_step_button(key, "next")


def _is_step_button(key: str | None, name: str) -> bool:
    """Whether a widget key is the step player's button `name` (`{key}-{name}`)."""
    return key is not None and key.endswith(f"-{name}")


async def step_cpu_ms(server: Served, timeout: float) -> tuple[float, int]:
    """The server's mean CPU per Next or Back press on chapter 1, one student alone, over
    `STEP_PRESSES` presses (every step already visited once, as a class finds them)."""
    tab = await StreamlitSession.open(server.url, timeout, {})
    try:
        run = await tab.open_page("chapter-1", "step=0")
        moves = ["next"] * STEPS_EACH_WAY + ["back"] * STEPS_EACH_WAY
        run = await _press_steps(tab, run, moves)
        before = total_cpu(server)
        rounds = STEP_PRESSES // len(moves)
        await _press_steps(tab, run, moves * rounds)
        return 1000 * (total_cpu(server) - before) / (rounds * len(moves)), rounds * len(moves)
    finally:
        await close_quietly(tab)


async def _press_steps(tab: StreamlitSession, run: Run, moves: Sequence[str]) -> Run:
    """Press the step player's buttons named in `moves`, in order; the last run."""
    for name in moves:
        found = [w for w in run.widgets if w.kind == "button" and _is_step_button(w.key, name)]
        if len(found) != 1:
            raise RuntimeError(f"expected one {name} button on chapter 1, found {len(found)}")
        run = await tab.click(found[0])
        if run.errors:
            raise RuntimeError(f"pressing {name} on chapter 1: {run.errors[0]}")
    return run


def print_step_round(cpu_ms: float, presses: int) -> bool:
    """The step round's figure and its target; returns whether it is met."""
    met = cpu_ms <= STEP_CPU_TARGET_MS
    print(f"\nThe step round: one student alone, {presses} presses of Next and Back on chapter 1")
    print(f"  server CPU per press: {cpu_ms:.1f} ms (mean over every press; every process of it)")
    print(f"  target server CPU per press <= {STEP_CPU_TARGET_MS:g} ms: {_met(met)}")
    return met


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
            MATRIX_CELL,
            tab.change(click, fragment_id=table.fragment_id),
            expect_param("cell", f"{design} · {column}"),
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


def drew_join_form(run: Run) -> str | None:
    """The class link must offer to join."""
    try:
        run.widget("ex-join", "button")
    except LookupError:
        return "the class link drew no join button"
    return None


def was_graded(run: Run) -> str | None:
    """An answer must come back graded (right, or not quite)."""
    return None if class_session.graded(run) else "the answer was not graded on the page"


async def class_flow(student: Student, lesson: Lesson) -> None:
    """Open the class link in a new tab and join; then answer the three predictions, each
    opened in a new tab with the student's own link (as a reload or a bookmark opens it)."""
    tab = await student.open_tab(lesson.url, OPEN_CLASS)
    try:
        link = f"class={lesson.class_id}"
        run = await student.record(OPEN_CLASS, tab.open_page("exercises", link), drew_join_form)
        nickname, join = run.widget("ex-nickname"), run.widget("ex-join")
        joined = tab.change(
            WidgetState(id=nickname.id, string_value=f"student {student.index}"),
            WidgetState(id=join.id, trigger_value=True),
        )
        run = await student.record(JOIN, joined, lambda r: None if url_param(r, "student") else "")
    finally:
        await close_quietly(tab)
    token = url_param(run, "student") or ""
    if not token:
        raise student.fail(JOIN, "joining put no student code in the link")
    student.joined += 1
    for exercise in class_session.PREDICTIONS:
        tab = await student.open_tab(lesson.url, OPEN_EXERCISE)
        try:
            shown = tab.open_page(
                "exercises", class_session.student_link(lesson.class_id, token, exercise)
            )
            run = await student.record(OPEN_EXERCISE, shown, _fine)
            ticked = [p for p in class_session.PROPERTIES if student.rng.random() < 0.5]
            answered = class_session.predict(tab, run, exercise, ticked)
            await student.record(ANSWER, answered, was_graded)
            student.given.append(
                class_session.GivenAnswer(token, exercise, class_session.answer_text(ticked))
            )
        finally:
            await close_quietly(tab)


async def attend(student: Student, lesson: Lesson, flows: int) -> None:
    """Arrive (staggered), then go through the lesson a number of times."""
    await asyncio.sleep(student.index * student.plan.stagger)
    try:
        for _ in range(flows):
            await chapter_flow(student, lesson.url)
            await tools_flow(student, lesson.url)
            if lesson.class_id:
                await class_flow(student, lesson)
            student.flows_done += 1
    except FlowStopped:
        return
    except Exception as error:  # a fault of this benchmark: counted, and the class goes on
        student.samples.append(Sample("benchmark fault", None, (repr(error)[:200],), 0))


# ----- the teacher ----------------------------------------------------------------------------


@dataclass
class Teacher:
    """The teacher's dashboard, open through the round: its refreshes, and what it shows."""

    samples: list[Sample] = field(default_factory=list)
    joined: str = ""
    answers: str = ""


def _metrics(run: Run) -> dict[str, str]:
    """The dashboard's figures by label."""
    return {e.metric.label: e.metric.body for e in run.elements if e.WhichOneof("type") == "metric"}


async def watch_dashboard(
    url: str, class_id: str, key: str, teacher: Teacher, stop: asyncio.Event, timeout: float
) -> None:
    """Keep the dashboard open, rerunning its live part every 3 s as the browser does."""
    tab = await StreamlitSession.open(url, timeout, {})
    try:
        run = await tab.open_page("class", f"class={class_id}&key={key}")
        live = next((f for f in run.fragments if f), "")
        while not stop.is_set() and live:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), DASHBOARD_SECONDS)
            if stop.is_set():
                break
            try:
                refreshed = await tab.rerun_fragment(live)
            except SessionBroken as error:
                teacher.samples.append(Sample(DASHBOARD, None, (str(error),), 0))
                return
            teacher.samples.append(
                Sample(DASHBOARD, refreshed.seconds, refreshed.errors, refreshed.script_runs)
            )
    finally:
        await close_quietly(tab)


async def final_dashboard(url: str, class_id: str, key: str, timeout: float) -> dict[str, str]:
    """The dashboard's figures, opened again after the round (none when it cannot be
    opened: the report then says the dashboard counts `?` students)."""
    try:
        tab = await StreamlitSession.open(url, timeout, {})
    except Exception as error:  # refused, timed out or a bad handshake
        print(f"  the teacher's dashboard could not be opened again: {error}")
        return {}
    try:
        return _metrics(await tab.open_page("class", f"class={class_id}&key={key}"))
    except (SessionBroken, LookupError) as error:
        print(f"  the teacher's dashboard could not be drawn again: {error}")
        return {}
    finally:
        await close_quietly(tab)


# ----- a round --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kept:
    """The answers given in a round against those the store holds afterwards."""

    given: int
    kept: int
    lost: int
    added: int
    dashboard_joined: str
    students_joined: int


@dataclass(frozen=True)
class Round:
    """A round's samples and the server's figures over it."""

    title: str
    sessions: int
    flows: int
    samples: tuple[Sample, ...]
    stopped: int
    cpu: dict[str, float]
    memory: dict[str, float]
    wall: float
    client_cpu: float
    load: float
    kept: Kept | None

    def seconds(self, interaction: str) -> list[float]:
        """Times of the finished samples of one interaction."""
        found = (s.seconds for s in self.samples if s.interaction == interaction)
        return [seconds for seconds in found if seconds is not None]

    def cpu_ms(self, interaction: str) -> float | None:
        """Mean server CPU of one interaction, in milliseconds (None: not measured). A mean,
        not a median: the kernel counts CPU in 10 ms ticks, and only their mean is fair."""
        found = [s.server_cpu for s in self.samples if s.interaction == interaction]
        measured = [cpu for cpu in found if cpu is not None]
        return 1000 * sum(measured) / len(measured) if measured else None

    @property
    def failed(self) -> list[Sample]:
        """Samples with at least one error."""
        return [s for s in self.samples if s.errors]

    @property
    def interactions(self) -> int:
        """Interactions made (finished or not)."""
        return len(self.samples)


def server_cpu(server: Served) -> dict[str, float]:
    """CPU seconds so far of each role's processes (with their children)."""
    return {role: sum(tree_cpu_seconds(pid) for pid in pids) for role, pids in server.roles.items()}


def total_cpu(server: Served) -> float:
    """CPU seconds so far of every process of the server together."""
    return sum(server_cpu(server).values())


def server_memory(server: Served) -> dict[str, float]:
    """Memory of each role: peak resident of a server process or the proxy, resident now of
    the database's processes together."""
    return {
        role: sum(
            tree_memory_mb(pid) if role == "database" else peak_memory_mb(pid) for pid in pids
        )
        for role, pids in server.roles.items()
    }


def count_kept(server: Served, class_id: str, students: list[Student]) -> tuple[int, int, int]:
    """How many answers given the store holds, lost, and added (store rows nobody gave)."""
    given = Counter(
        (a.token, a.exercise_id, a.answer) for student in students for a in student.given
    )
    stored = Counter(server.answers(class_id))
    kept = sum((given & stored).values())
    return kept, sum((given - stored).values()), sum((stored - given).values())


async def play_round(
    server: Served, title: str, sessions: int, flows: int, plan: Plan, with_class: bool
) -> Round:
    """Have `sessions` students go through the lesson; measure the server meanwhile."""
    class_id = key = ""
    teacher = Teacher()
    stop = asyncio.Event()
    watcher = None
    if with_class:
        tab = await StreamlitSession.open(server.url, plan.timeout, {})
        class_id, key = await class_session.create_class(tab, title)
        await close_quietly(tab)
        watcher = asyncio.create_task(
            watch_dashboard(server.url, class_id, key, teacher, stop, plan.timeout)
        )
    load = os.getloadavg()[0]
    cpu_before, client_before = server_cpu(server), time.process_time()
    started = time.perf_counter()
    alone = functools.partial(total_cpu, server) if sessions == 1 else None
    students = [Student(index, plan, server_cpu=alone) for index in range(sessions)]
    lesson = Lesson(server.url, class_id)
    await asyncio.gather(*(attend(student, lesson, flows) for student in students))
    wall = time.perf_counter() - started
    cpu_after = server_cpu(server)
    kept = None
    if watcher is not None:
        stop.set()
        await watcher
        figures = await final_dashboard(server.url, class_id, key, plan.timeout)
        stored, lost, added = count_kept(server, class_id, students)
        joined = sum(s.joined for s in students)
        kept = Kept(
            sum(len(s.given) for s in students),
            stored,
            lost,
            added,
            figures.get("Students joined", "?"),
            joined,
        )
    return Round(
        title=title,
        sessions=sessions,
        flows=flows,
        samples=tuple(s for student in students for s in student.samples) + tuple(teacher.samples),
        stopped=sum(student.flows_done < flows for student in students),
        cpu={role: cpu_after[role] - cpu_before[role] for role in cpu_after},
        memory=server_memory(server),
        wall=wall,
        client_cpu=time.process_time() - client_before,
        load=load,
        kept=kept,
    )


# ----- figures --------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (the smallest value with at least `fraction` at or below it)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def print_table(result: Round) -> None:
    """Samples, p50, p95, max and errors per interaction, and the median server CPU of each
    when it was measured (one student alone)."""
    with_cpu = any(s.server_cpu is not None for s in result.samples)
    cpu_head = f"{'CPU ms':>9}" if with_cpu else ""
    print(
        f"  {'interaction':<28}{'n':>6}{'p50 s':>9}{'p95 s':>9}{'max s':>9}{'errors':>8}" + cpu_head
    )
    for interaction in INTERACTIONS:
        times = result.seconds(interaction)
        errors = sum(1 for s in result.failed if s.interaction == interaction)
        if not times and not errors:
            continue
        cpu = result.cpu_ms(interaction)
        cpu_cell = (f"{cpu:>9.1f}" if cpu is not None else f"{'-':>9}") if with_cpu else ""
        print(
            f"  {interaction:<28}{len(times):>6}{percentile(times, 0.5):>9.3f}"
            f"{percentile(times, 0.95):>9.3f}{max(times, default=math.nan):>9.3f}{errors:>8}"
            + cpu_cell
        )
    if with_cpu:
        print(
            "  CPU ms: the server's CPU per interaction (mean; every process of it, the "
            "teacher's dashboard refreshes included)"
        )


def print_errors(result: Round) -> None:
    """How many interactions failed, and the distinct reasons."""
    reasons = Counter(f"{s.interaction}: {e}" for s in result.failed for e in s.errors)
    stopped = f"; {result.stopped} of {result.sessions} students stopped early"
    print(f"  errors: {len(result.failed)} interactions{stopped if result.stopped else ''}")
    for reason, count in reasons.most_common(8):
        print(f"    {count}x {reason}")


def print_kept(result: Round) -> None:
    """Answers given against answers the store holds; students the dashboard counts."""
    kept = result.kept
    if kept is None:
        return
    print(
        f"  answers kept: {kept.kept} of {kept.given} given are in the store "
        f"({kept.lost} lost, {kept.added} the store holds that nobody gave)"
    )
    print(
        f"  the teacher's dashboard counts {kept.dashboard_joined} students joined; "
        f"{kept.students_joined} joins were made"
    )


def print_server(result: Round) -> None:
    """CPU per interaction by role, cores busy, memory, and the client's own CPU."""
    total = sum(result.cpu.values())
    clicks = result.interactions or 1
    parts = ", ".join(
        f"{role} {seconds / clicks * 1000:.1f}" for role, seconds in result.cpu.items()
    )
    print(
        f"  server CPU per interaction: {total / clicks * 1000:.1f} ms ({parts}); "
        f"{total:.1f} s CPU in {result.wall:.1f} s = {total / result.wall:.2f} cores busy"
    )
    memory = ", ".join(f"{role} {mb:.0f} MB" for role, mb in result.memory.items())
    print(f"  memory: {memory} (peak resident; the database: resident now, all its processes)")
    print(
        f"  this client used {result.client_cpu:.1f} s CPU; machine load average "
        f"{result.load:.2f} on {os.cpu_count()} cores when the round started"
    )


def print_targets(result: Round, targeted: Sequence[str], target: float | None) -> bool:
    """Whether the targeted interactions' p95 is under the target, with no error and no
    answer lost; returns whether all are met."""
    verdicts = []
    if target is not None:
        for interaction in targeted:
            times = result.seconds(interaction)
            if not times:
                continue
            p95 = percentile(times, 0.95)
            verdicts.append(p95 < target)
            print(f"  target p95 < {target:g} s, {interaction}: {p95:.3f} s, {_met(p95 < target)}")
    clean = not result.failed
    verdicts.append(clean)
    print(f"  target no errors: {len(result.failed)}, {_met(clean)}")
    if result.kept is not None:
        whole = result.kept.lost == 0 and result.kept.added == 0
        verdicts.append(whole)
        print(
            f"  target no answer lost and none added: {result.kept.lost} lost, "
            f"{result.kept.added} added, {_met(whole)}"
        )
    return all(verdicts)


def _met(met: bool) -> str:
    """A verdict word that stands out when the target is missed."""
    return "met" if met else "NOT MET"


def print_round(result: Round, targeted: Sequence[str], target: float | None) -> bool:
    """The whole report of a round; returns whether its targets are met."""
    flows = f", {result.flows} lessons each" if result.flows > 1 else ""
    print(f"\n{result.title}: {result.sessions} student(s){flows}, {result.wall:.1f} s")
    print_table(result)
    print_errors(result)
    print_kept(result)
    print_server(result)
    return print_targets(result, targeted, target)


# ----- profiling ------------------------------------------------------------------------------


def py_spy() -> str | None:
    """The py-spy program, when installed (in this environment or on the PATH)."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


@contextlib.contextmanager
def profiled(pid: int, output: Path | None) -> Iterator[bool]:
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
    command = [program, "record", "--pid", str(pid), "--output", str(output)]
    command += ["--format", "raw", "--rate", "50", "--nonblocking", "--gil"]
    with output.with_suffix(".log").open("wb") as sink:
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


def think_range(text: str) -> tuple[float, float]:
    """`1-5` (seconds, at least 0) as a pair; argparse's error for anything else."""
    low, sep, high = text.partition("-")
    try:
        pair = (float(low), float(high if sep else low))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected MIN-MAX seconds such as 1-5: {text!r}"
        ) from None
    if not 0 <= pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"expected 0 <= MIN <= MAX: {text!r}")
    return pair


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        description="A class of students against the real server: latency per interaction, "
        "errors, answers kept, CPU per click and memory, against the targets."
    )
    parser.add_argument(
        "--sessions", type=int, default=CLASS_SIZE, help="students in the class (default 30)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="server processes behind the proxy (default: one process, no proxy)",
    )
    parser.add_argument(
        "--think",
        type=think_range,
        default=(1.0, 5.0),
        help="seconds a student pauses after each click in the class round with think "
        "times, MIN-MAX (default 1-5)",
    )
    parser.add_argument(
        "--modes",
        default="think,burst",
        help="the class rounds: think (think times), burst (all at once), or both (default)",
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds one interaction may take (60)"
    )
    parser.add_argument(
        "--stagger", type=float, default=0.1, help="seconds between students' arrivals (0.1)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the students' choices")
    parser.add_argument(
        "--profile", type=Path, help="sample a server process with py-spy during a class round"
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an extra Streamlit setting for the one-process server",
    )
    args = parser.parse_args(argv)
    modes = set(args.modes.split(","))
    if not modes or not modes <= {"think", "burst"}:
        parser.error("--modes takes think, burst or think,burst")
    args.modes = [mode for mode in ("think", "burst") if mode in modes]
    if args.sessions < 1 or args.timeout <= 0 or args.stagger < 0 or not 0 <= args.workers <= 64:
        parser.error("--sessions at least 1, --timeout positive, --workers 0 to 64")
    for option in args.option:
        name, sep, value = option.partition("=")
        if not sep or not name or not value or not name.replace(".", "").isalnum():
            parser.error(f"--option takes NAME=VALUE such as runner.postScriptGC=false: {option!r}")
    if args.option and args.workers:
        parser.error("--option applies to the one-process server (without --workers)")
    return args


def _interrupted(signum: int, frame: object) -> None:
    """SIGTERM ends the benchmark as Ctrl-C does, so the server is stopped on the way out."""
    raise KeyboardInterrupt


def measure(args: argparse.Namespace, server: Served) -> bool:
    """The rounds and their reports; returns whether every target is met."""
    quiet = (0.0, 0.0)
    plan = Plan(timeout=args.timeout, think=quiet, stagger=args.stagger, seed=args.seed)
    cold_plan = Plan(timeout=COLD_TIMEOUT_S, think=quiet, stagger=0.0, seed=args.seed)
    cold = asyncio.run(
        play_round(server, "Cold first visit (every cache empty)", 1, 1, cold_plan, True)
    )
    met = print_round(cold, (), None)
    solo = asyncio.run(play_round(server, "One student", 1, SOLO_FLOWS, plan, True))
    met = print_round(solo, SOLO_TARGETED, SOLO_TARGET_S) and met
    met = print_step_round(*asyncio.run(step_cpu_ms(server, args.timeout))) and met
    if args.sessions <= 1:
        return met
    for mode in args.modes:
        think = args.think if mode == "think" else quiet
        title = (
            f"A class with think times ({think[0]:g}-{think[1]:g} s between clicks)"
            if mode == "think"
            else "A class all at once (no pause between clicks)"
        )
        timed = mode == "think" and args.sessions <= LATENCY_TARGET_UP_TO
        target = CLASS_TARGET_S if timed else None
        round_plan = Plan(timeout=args.timeout, think=think, stagger=args.stagger, seed=args.seed)
        pid = next(iter(server.roles.values()))[0]
        with profiled(pid, args.profile if mode == args.modes[0] else None) as profiling:
            crowd = asyncio.run(play_round(server, title, args.sessions, 1, round_plan, True))
        met = print_round(crowd, CLICKS, target) and met
        if mode == "think" and not timed:
            print(
                f"  (the p95 target is for classes of up to {LATENCY_TARGET_UP_TO} students; "
                f"{args.sessions} ask for more than two cores)"
            )
        if profiling and args.profile is not None:
            print_profile(args.profile)
    return met


def main(argv: Sequence[str] | None = None) -> None:
    """Start the server, play the rounds, print the figures, stop the server."""
    args = parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _interrupted)
    served = (
        f"`make serve-class WORKERS={args.workers}` ({args.workers} processes behind HAProxy, "
        "classes in PostgreSQL)"
        if args.workers
        else "one server process (`make serve-class`)"
    )
    print(f"Class benchmark: protocol-level students against {served}")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-class-") as folder:
            start = (
                class_server(Path(folder), args.workers)
                if args.workers
                else one_process(Path(folder), args.option)
            )
            with start as server:
                for line in server.description:
                    print(line)
                if args.option:
                    print(f"  extra settings: {', '.join(args.option)}")
                met = measure(args, server)
                problems = [line for log in server.logs() for line in log_problems(log)]
                print(f"\n  server logs: {len(problems)} error or traceback lines")
                for line in problems[:10]:
                    print(f"    {line[:160]}")
    except KeyboardInterrupt:
        print("\ninterrupted: the server was stopped", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"\nAll targets {'met' if met else 'NOT met'}.")


def log_problems(log: Path) -> list[str]:
    """Lines of a server log that report an error or a traceback."""
    markers = ("Traceback", "Uncaught app", "ERROR", "Error processing")
    with contextlib.suppress(OSError):
        lines = log.read_text(errors="replace").splitlines()
        return [line for line in lines if any(marker in line for marker in markers)]
    return []


if __name__ == "__main__":
    main()
