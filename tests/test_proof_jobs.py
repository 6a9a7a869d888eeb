"""The isolated proof runner: same rows as in-process, and a crash, a hang, a failure or an
interruption in the worker ends as one sentence with the worker gone, never in the caller."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from multiprocessing.context import ForkServerProcess
from pathlib import Path

import pytest

from lab.processes import ENDED, process_state
from model.design import Bounds
from model.formats.trace import replay
from model.presets import PRESETS
from model.verdicts import Status
from webapp.jobs.proving import Ending, proof_rows, prove_isolated, run_isolated

ROOT = Path(__file__).resolve().parents[1]
SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
HANG_BOUND_SECONDS = 30.0
"""Generous upper bound for a job that must be ended (catches a hang, not a timing)."""


def _main_module_file() -> str | None:
    """The file of the job's main module: the parent's, had multiprocessing run it again."""
    return getattr(sys.modules["__main__"], "__file__", None)


def _segfault() -> None:
    """A job that dies the way a crash inside native code does."""
    os.kill(os.getpid(), signal.SIGSEGV)


def _exit_three() -> None:
    """A job whose process exits on the spot with status 3 (no answer sent)."""
    os._exit(3)


def _raise() -> None:
    """A job that fails with an ordinary exception."""
    raise ValueError("no such design")


def _too_much_memory() -> int:
    """A job that asks for more memory than a job may have."""
    return len(bytearray(5 * 2**30))


def _sleep_after_writing_pid(path: str) -> None:
    """A job that never finishes (after saying which process it is)."""
    Path(path).write_text(str(os.getpid()))
    time.sleep(3600)


def _gone(pid: int) -> bool:
    """Whether a process has ended (gone, or a zombie waiting to be collected)."""
    return process_state(pid) in ENDED


def _wait_gone(pid: int) -> bool:
    """Whether the process ends within a few seconds."""
    ends = time.monotonic() + 5
    while time.monotonic() < ends:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("name", ["fencing", "lease-only", "random-token"])
@pytest.mark.slow
def test_a_proof_job_gives_the_same_rows_as_proving_in_process(name: str) -> None:
    """Round trip: the worker's rows equal the rows proved here, verdicts, invariants and
    reasons alike. z3 may pick another shortest run in a process whose context has served
    other proofs, so a counterexample must have the same length and replay to the violation."""
    design = PRESETS[name].design
    outcome = prove_isolated(design, SMALL, max_states=300_000, max_seconds=20)
    assert outcome.ending is Ending.DONE and outcome.done and outcome.problem == ""
    assert outcome.value is not None
    here = proof_rows(design, SMALL, 300_000, 20)
    assert [replace(row, actions=()) for row in outcome.value] == [
        replace(row, actions=()) for row in here
    ]
    for theirs, ours in zip(outcome.value, here, strict=True):
        assert len(theirs.actions) == len(ours.actions)
        if theirs.status is Status.VIOLATED:
            assert theirs.prop in replay(design, SMALL, theirs.actions).steps[-1].violations
    again = prove_isolated(design, SMALL, max_states=300_000, max_seconds=20)
    assert again.value == outcome.value  # each job starts from the same fresh z3


def test_a_job_does_not_run_the_parent_main_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the server the main module is the page Streamlit ran last: a job must not run it."""
    page = tmp_path / "page.py"  # a main module that leaves a mark if it is run
    page.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules["__main__"], "__file__", str(page), raising=False)
    outcome = run_isolated(_main_module_file, (), deadline=10)
    assert outcome.ending is Ending.DONE and outcome.value is None
    assert not (tmp_path / "ran").exists()


def test_a_crash_in_the_job_is_one_sentence_naming_the_signal() -> None:
    """A segfault ends the job, not the caller, and the visitor reads what happened."""
    outcome = run_isolated(_segfault, (), deadline=10, what="z3")
    assert outcome.ending is Ending.CRASHED and outcome.value is None
    assert outcome.problem == (
        "z3 stopped unexpectedly (it was killed by SIGSEGV) before it could say; "
        "nothing else was affected, so you can try again."
    )


def test_a_job_that_exits_without_answering_is_a_crash_with_its_status() -> None:
    """os._exit(3) in the job: reported with its exit status."""
    outcome = run_isolated(_exit_three, (), deadline=10, what="z3")
    assert outcome.ending is Ending.CRASHED
    assert "(it exited with status 3)" in outcome.problem


def test_an_exception_in_the_job_is_reported_as_a_failure() -> None:
    """The job's own exception comes back as text, with its type."""
    outcome = run_isolated(_raise, (), deadline=10, what="z3")
    assert outcome.ending is Ending.FAILED
    assert outcome.problem == "z3 failed before it could say: ValueError: no such design"


def test_a_job_cannot_take_more_memory_than_its_limit() -> None:
    """5 GiB is past a job's address-space limit: the job fails, the caller is untouched."""
    outcome = run_isolated(_too_much_memory, (), deadline=10, what="z3")
    assert outcome.ending is Ending.FAILED and "MemoryError" in outcome.problem


def test_a_job_past_its_deadline_is_killed_and_reported_out_of_time(tmp_path: Path) -> None:
    """A job that never ends is killed after its deadline plus grace, in the page's words."""
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    outcome = run_isolated(
        _sleep_after_writing_pid, (str(pid_file),), deadline=0.5, grace=0.5, what="z3"
    )
    assert time.monotonic() - started < HANG_BOUND_SECONDS
    assert outcome.ending is Ending.OUT_OF_TIME and outcome.seconds >= 1.0
    assert outcome.problem.startswith("Not settled: z3 ran out of its time budget (0.5 s)")
    assert _wait_gone(int(pid_file.read_text()))


class _Left(Exception):
    """Stands for Streamlit stopping a script whose visitor has gone."""


def test_an_interrupted_wait_ends_the_job_and_the_interruption_propagates(
    tmp_path: Path,
) -> None:
    """When the waiting side is stopped (its on_tick raises), the worker is ended too."""
    pid_file = tmp_path / "pid"
    ticks: list[float] = []

    def tick(seconds: float) -> None:
        """Stop waiting once the job has said which process it is."""
        ticks.append(seconds)
        if pid_file.exists() and pid_file.read_text():
            raise _Left

    with pytest.raises(_Left):
        run_isolated(_sleep_after_writing_pid, (str(pid_file),), deadline=60, on_tick=tick)
    assert ticks and ticks[-1] < HANG_BOUND_SECONDS
    assert _wait_gone(int(pid_file.read_text()))


@pytest.mark.slow
def test_no_module_of_the_web_app_loads_z3_in_the_server() -> None:
    """Every webapp module imported together leaves z3 unloaded: only proof jobs load it."""
    script = (
        "import pkgutil, importlib, sys, webapp\n"
        "for m in pkgutil.walk_packages(webapp.__path__, 'webapp.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n == 'z3' or n.startswith('z3.')), flush=True)\n"
        # The entry script starts the background set checker: leave without finalizing, so
        # a daemon thread still writing its log cannot abort the interpreter's shutdown.
        "import os; os._exit(0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_job_that_cannot_be_started_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    """No process can be made (say the machine is out of them): a sentence, not a traceback."""

    def refuse(self: object) -> None:
        """What starting a process does when the kernel refuses to fork."""
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(ForkServerProcess, "start", refuse)
    outcome = run_isolated(_raise, (), deadline=10, what="z3")
    assert outcome.ending is Ending.FAILED
    assert outcome.problem == (
        "z3 failed before it could say: it could not be started "
        "([Errno 11] Resource temporarily unavailable)"
    )
