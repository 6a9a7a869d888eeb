"""Every proof the web app asks for runs in a process of its own, with a deadline.

z3's context is not safe to share between threads, and the server answers many visitors on
many threads at once; native code that crashes or hangs must not take the server with it.
So a proof is a job: a fresh worker process (forked from a small single-threaded fork
server that has the prover imported already, never from the multi-threaded server itself)
proves one design and sends back plain rows. The server never runs z3 itself. The waiting
side ends the job at its deadline plus a grace period, reports a crash (a signal, a
non-zero exit) as one sentence, and always ends the worker, also when the waiting is
interrupted (the visitor left, the page reran, the server is shutting down).

Nothing here imports Streamlit; the page passes `on_tick`, which is called a few times a
second while the job runs (the page moves its progress bar there, which is also where
Streamlit stops a script whose visitor has gone).
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.forkserver
import pickle
import resource
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from multiprocessing import spawn
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

if TYPE_CHECKING:
    from model.design import Bounds, Design
    from webapp.show.proofs_view import ProofRow

T = TypeVar("T")

WEB_PROVE_SECONDS: Final = 20.0
WEB_PROVE_STATES: Final = 300_000
"""One proof from the web app stops after this long and this many explored states, so a
link cannot keep the server busy for others."""
GRACE_SECONDS: Final = 5.0
"""How long past its own deadline a job may run before it is killed."""
TICK_SECONDS: Final = 0.25
"""How often the waiting side looks at the job and calls `on_tick`."""
MEMORY_BYTES: Final = 4 * 2**30
"""Address space one job may use; past it the job fails on its own, the server is untouched."""
PRELOADED: Final = ("proofs.report", "webapp.show.proofs_view", "webapp.jobs.proving_warmup")
"""Modules the fork server imports once, so a job starts in milliseconds with the prover
imported and the explorer's kernels loaded."""
JOB_NAME: Final = "fencing lab proof job"
"""The name of every job's process; multiprocessing prepares processes of this name without
the parent's main module (see `_context`)."""


class Ending(Enum):
    """How a job ended."""

    DONE = "done"
    OUT_OF_TIME = "out of time"
    CRASHED = "crashed"
    FAILED = "failed"
    SHUTDOWN = "shutdown"


@dataclass(frozen=True)
class JobOutcome(Generic[T]):
    """What a job gave back: its value when it finished, otherwise one sentence saying why not."""

    ending: Ending
    value: T | None
    problem: str
    seconds: float

    @property
    def done(self) -> bool:
        """Whether the job finished and gave its value."""
        return self.ending is Ending.DONE


def _without_main(prepare: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    """multiprocessing's preparation of a new process, minus the main module for jobs.

    A new process normally runs the parent's main module again first. In the server that is
    whatever script Streamlit ran last (Streamlit installs each page run as `__main__`), so
    a job would run a page of the app before its proof. A job needs nothing from the main
    module: its function lives in an importable module.
    """

    def preparation(name: str) -> dict[str, Any]:
        """The preparation data for a process called `name`."""
        data = prepare(name)
        if name == JOB_NAME:
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    return preparation


_SETUP_LOCK = threading.Lock()


@cache
def _context() -> ForkServerContext:
    """The fork-server context, its server set to import the prover once when it starts."""
    with _SETUP_LOCK:
        context = multiprocessing.get_context("forkserver")
        assert isinstance(context, ForkServerContext)
        context.set_forkserver_preload(list(PRELOADED))
        if not hasattr(spawn.get_preparation_data, "without_main"):
            preparation = _without_main(spawn.get_preparation_data)
            preparation.without_main = True  # type: ignore[attr-defined]
            setattr(spawn, "get_preparation_data", preparation)  # noqa: B010
        return context


def start_fork_server() -> None:
    """Start the fork server now if it is not running (it then imports the prover while the
    visitor reads the page), so the first proof does not wait for it; cheap when running."""
    _context()
    multiprocessing.forkserver.ensure_running()


def _limit_self(cpu_seconds: int) -> None:
    """A job's own backstops: the kernel ends it past its CPU time or its memory."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def _job_main(
    function: Callable[..., object], args: tuple[object, ...], writer: Connection, cpu: int
) -> None:
    """The worker process: run the function once and send back ("value", v) or ("error", text)."""
    _limit_self(cpu)
    try:
        value = function(*args)
    except BaseException as error:  # the job's own failure is its answer, not a crash
        writer.send(("error", f"{type(error).__name__}: {error}"))
    else:
        writer.send(("value", value))
    writer.close()


def _exit_words(exitcode: int | None) -> str:
    """A worker's end in words: the signal that killed it, or its exit status."""
    if exitcode is None:
        return "it stopped answering"
    if exitcode < 0:
        try:
            return f"it was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"it was killed by signal {-exitcode}"
    return f"it exited with status {exitcode}"


def _end(process: BaseProcess) -> int | None:
    """End a worker for sure (killed when still running) and collect it; its exit code."""
    if process.pid is None:  # it never started
        return None
    if process.is_alive():
        process.kill()
    process.join(timeout=5)
    exitcode = process.exitcode
    if exitcode is not None:
        process.close()
    return exitcode


def run_isolated(
    function: Callable[..., T],
    args: tuple[object, ...],
    *,
    deadline: float,
    what: str = "the job",
    on_tick: Callable[[float], None] | None = None,
    grace: float = GRACE_SECONDS,
) -> JobOutcome[T]:
    """Run `function(*args)` in a worker process; its value, or why there is none.

    `function` and its arguments and value must be picklable (a function of an importable
    module, not of the main script, and plain data). The worker is killed `grace` seconds
    after `deadline` seconds; `what` names the work in the sentences. `on_tick` gets the
    seconds elapsed; an exception it raises ends the worker and propagates.
    """
    context = _context()
    reader, writer = context.Pipe(duplex=False)
    cpu = 2 * math.ceil(deadline + grace) + 1  # a backstop: the explorer may use two cores
    process = context.Process(
        target=_job_main, args=(function, args, writer, cpu), name=JOB_NAME, daemon=True
    )
    started = time.monotonic()
    payload: Any = None
    try:
        try:
            process.start()
        except OSError as error:  # no process could be made (out of processes or memory)
            ending, payload = Ending.FAILED, f"it could not be started ({error})"
        else:
            writer.close()
            ending, payload = _wait(reader, process, started + deadline + grace, started, on_tick)
    finally:
        writer.close()
        reader.close()
        exitcode = _end(process)
    seconds = time.monotonic() - started
    if ending is Ending.DONE:
        return JobOutcome(ending, payload, "", seconds)
    return JobOutcome(ending, None, _problem(ending, what, deadline, payload, exitcode), seconds)


def _problem(
    ending: Ending, what: str, deadline: float, error: object, exitcode: int | None
) -> str:
    """Why a job gave no value, in one sentence for the visitor."""
    if ending is Ending.OUT_OF_TIME:
        return (
            f"Not settled: {what} ran out of its time budget ({deadline:g} s) before it could "
            "say, so it was stopped. Smaller bounds finish sooner."
        )
    if ending is Ending.SHUTDOWN:
        return f"The server is shutting down, so {what} was stopped."
    if ending is Ending.FAILED:
        return f"{what} failed before it could say: {error}"
    return (
        f"{what} stopped unexpectedly ({_exit_words(exitcode)}) before it could say; "
        "nothing else was affected, so you can try again."
    )


def _wait(
    reader: Connection,
    process: BaseProcess,
    kill_at: float,
    started: float,
    on_tick: Callable[[float], None] | None,
) -> tuple[Ending, Any]:
    """Wait for the worker's answer, its end, the kill time or the server's shutdown."""
    while True:
        if reader.poll(TICK_SECONDS):
            return _answer(reader)
        now = time.monotonic()
        if not process.is_alive():  # it may have answered just before it ended
            return _answer(reader) if reader.poll(0) else (Ending.CRASHED, None)
        if now >= kill_at:
            return Ending.OUT_OF_TIME, None
        if not threading.main_thread().is_alive():
            return Ending.SHUTDOWN, None
        if on_tick is not None:
            on_tick(now - started)


def _answer(reader: Connection) -> tuple[Ending, Any]:
    """The worker's answer: its value or its error text; a worker that died mid-answer crashed."""
    try:
        kind, payload = reader.recv()
    except (EOFError, OSError, pickle.UnpicklingError):
        return Ending.CRASHED, None
    return (Ending.DONE if kind == "value" else Ending.FAILED), payload


def proof_rows(
    design: Design, bounds: Bounds, max_states: int, max_seconds: float
) -> tuple[ProofRow, ...]:
    """The prover's report as rows, computed in the job's process (the only place z3 runs)."""
    from proofs.report import prove
    from webapp.show.proofs_view import rows_of

    return rows_of(prove(design, bounds, max_states=max_states, max_seconds=max_seconds))


def prove_isolated(
    design: Design,
    bounds: Bounds,
    *,
    max_states: int,
    max_seconds: float,
    on_tick: Callable[[float], None] | None = None,
) -> JobOutcome[tuple[ProofRow, ...]]:
    """One design's proof rows from a worker process, within the proof's own deadline."""
    return run_isolated(
        proof_rows,
        (design, bounds, max_states, max_seconds),
        deadline=max_seconds,
        what="z3",
        on_tick=on_tick,
    )
