"""The `fencing` command under a hostile operator: Ctrl-C, a full device, a closed or broken
standard output, and nonsense budgets. Each gets one line and its exit status, never a
traceback or a normal-looking report.

The interrupt tests run the real command in a child process and send SIGINT at a point of
its work: a search is interrupted once it has loaded its compiled loops (it marks them
ready in its private folder, which the test watches) or its native engine (the library
from that folder appears among its memory maps), with budgets it cannot spend before
the signal; start-up and `prove` once the child has used enough processor time to be past
the interpreter's start or inside z3's checks. Then they wait with a generous limit that
only catches a hang.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest
import z3

from fencing import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_IO_ERROR, EXIT_USAGE, cli
from fencing.interrupts import sigint_recorded, z3_stops_on_ctrl_c
from proofs.report import let_ctrl_c_through
from tests.cli_helpers import run

FENCING = Path(sys.executable).with_name("fencing")
HANG_SECONDS = 120.0
"""A child that has not ended this long after the signal is hung."""

pytestmark = pytest.mark.skipif(not FENCING.exists(), reason="the fencing script is not installed")


def start(
    args: list[str],
    stdout: IO[str] | int = subprocess.PIPE,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    """The `fencing` command with these arguments, with Ctrl-C handled as in a terminal.

    SIGINT is reset to its default in the child: a test run in the background inherits it
    ignored, and the command rightly leaves an ignored interrupt ignored.
    """
    return subprocess.Popen(
        [str(FENCING), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def cpu_seconds(pid: int) -> float:
    """Processor time the process has used so far (every thread, user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def interrupt_after(args: list[str], cpu: float) -> tuple[int, str, str]:
    """Start the command, send SIGINT once it used `cpu` seconds of processor time."""
    child = start(args)
    while child.poll() is None and cpu_seconds(child.pid) < cpu:
        time.sleep(0.005)
    assert child.poll() is None, "the command ended before it could be interrupted"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=HANG_SECONDS)
    return child.returncode, out, err


@pytest.fixture(scope="module")
def kernels_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private folder for the searches' compiled loops, watched by nobody else."""
    return tmp_path_factory.mktemp("cache")


def ready_marks(folder: Path) -> dict[Path, int]:
    """Each compiled-loops marker in the folder, with when it was last touched."""
    marks = {}
    for path in folder.rglob("*.ready"):
        with contextlib.suppress(OSError):
            marks[path] = path.stat().st_mtime_ns
    return marks


def native_engine_mapped(pid: int, folder: Path) -> bool:
    """Whether the process has mapped a native engine's library from the folder."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            if str(folder) in line and "/levels_" in line and line.endswith(".so"):
                return True
    return False


def interrupt_in_search(args: list[str], cache: Path) -> tuple[int, str, str]:
    """Start the command with `cache` as its private folder and send SIGINT as soon as its
    search has loaded (or compiled) its loops or its native engine: a search touches the
    loops' marker once they are ready, and maps the engine's library from the folder, after
    start-up and the first levels, before the large levels they expand."""
    before = ready_marks(cache)
    child = start(args, env={**os.environ, "FENCING_LAB_CACHE": str(cache)})
    try:
        while child.poll() is None:
            after = ready_marks(cache)
            if any(before.get(path) != touched for path, touched in after.items()):
                break
            if native_engine_mapped(child.pid, cache):
                break
            time.sleep(0.005)
        assert child.poll() is None, "the command ended before its search loaded its engine"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=HANG_SECONDS)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, out, err


def assert_interrupted(code: int, out: str, err: str) -> None:
    """Exit status 130, one line saying so, and nothing on standard output."""
    assert (code, err, out) == (EXIT_INTERRUPTED, "fencing: interrupted\n", "")


# A proof of about eight seconds of processor time: the exploration ends at about half a
# second, then bounded model checking spends seconds in z3 (P1, P3, P5 violated at 13).
LONG_PROOF = [
    "prove",
    "--preset",
    "rmw-lease-only",
    "--workers",
    "3",
    "--lease",
    "3",
    "--horizon",
    "16",
    "--grants",
    "6",
    "--writes",
    "3",
    "--max-states",
    "60000",
]
# Bounds whose exploration would run for a minute or more, with budgets it cannot spend
# before the signal: 50,000,000 states take some 30 s of processor time even in the native
# engine (the signal follows within milliseconds of the search loading its compiled loops
# or its engine), and an hour. Each search starts with lease-only (as `matrix` does), so
# they share one set of loops and one engine.
LARGE_BOUNDS = ["--workers", "4", "--horizon", "20", "--grants", "6", "--writes", "3"]
UNSPENT = ["--max-states", "50000000", "--max-seconds", "3600"]


def test_ctrl_c_while_the_command_starts_is_one_line_not_an_import_traceback() -> None:
    """Past the interpreter's own start (about 0.02 s), inside the engines' imports."""
    assert_interrupted(*interrupt_after(["presets"], cpu=0.06))


@pytest.mark.slow
def test_ctrl_c_during_a_proof_is_an_interrupt_not_unknown() -> None:
    """z3 would answer `unknown` and the report would look normal; it must say interrupted."""
    assert_interrupted(*interrupt_after(LONG_PROOF, cpu=2.0))


def pigeonhole(pigeons: int) -> z3.Solver:
    """A solver asked to put `pigeons` pigeons in one hole fewer: minutes of search."""
    holes = range(pigeons - 1)
    placed = [[z3.Bool(f"p{p}h{h}") for h in holes] for p in range(pigeons)]
    check = z3.Solver()
    check.set("timeout", 60_000)
    check.add([z3.Or(row) for row in placed])
    for h in holes:
        for p, q in itertools.combinations(range(pigeons), 2):
            check.add(z3.Not(z3.And(placed[p][h], placed[q][h])))
    return check


def test_ctrl_c_stops_a_running_z3_check_at_once() -> None:
    """The check is stopped and raises KeyboardInterrupt, well before z3's 60 s timeout.

    With z3's own handler (its default), the check would return `unknown` instead; with
    that handler off but nobody telling z3 to stop, it would raise only after a minute.
    """
    let_ctrl_c_through()
    check = pigeonhole(14)
    signaller = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt), z3_stops_on_ctrl_c():
        signaller.start()
        check.check()
    signaller.join()
    assert time.perf_counter() - started < 30


def test_an_interrupt_dropped_by_a_finalizer_still_stops_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python drops a KeyboardInterrupt raised in `__del__` (z3's objects have one)."""
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # restored afterwards

    class Finalized:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)

    with sigint_recorded() as interrupts:
        Finalized()  # finalized at once: its KeyboardInterrupt is dropped
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()


@pytest.mark.xdist_group("cli-signals-search")  # one worker compiles the loops they share
@pytest.mark.parametrize(
    "args",
    [
        ["check", "--preset", "lease-only", *LARGE_BOUNDS, *UNSPENT],
        ["export", "itf", "--preset", "lease-only", "--property", "P1", *LARGE_BOUNDS, *UNSPENT],
        ["matrix", "--json", *LARGE_BOUNDS, *UNSPENT],
    ],
    ids=["check", "export-itf", "matrix"],
)
@pytest.mark.slow
def test_ctrl_c_during_a_search_is_an_interrupt(args: list[str], kernels_folder: Path) -> None:
    assert_interrupted(*interrupt_in_search(args, kernels_folder))


def test_an_interrupt_that_native_code_turned_into_another_error_is_still_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """numba reports a KeyboardInterrupt raised in one of its callbacks as a SystemError."""
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # restored afterwards

    def cut_short(argv: object) -> int:
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt as interrupt:
            raise SystemError("returned a result with an exception set") from interrupt
        return 0

    monkeypatch.setattr(cli, "_run", cut_short)
    code, out, err = run(["presets"], capsys)
    assert_interrupted(code, out, err)


def test_an_error_without_an_interrupt_is_not_called_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same error with no Ctrl-C behind it is a failure, and shown as one."""

    def fails(argv: object) -> int:
        raise SystemError("returned a result with an exception set")

    monkeypatch.setattr(cli, "_run", fails)
    with pytest.raises(SystemError):
        cli.main(["presets"])


WRITERS = [
    ["check", "--json"],
    ["presets"],
    ["matrix", "--json", "--horizon", "2", "--grants", "1"],
    ["replay", "--help"],
    ["prove", "--receiver-only"],
    ["export", "promela"],
    ["export", "itf", "--receiver", "none", "--property", "P1"],
]


@pytest.mark.parametrize("args", WRITERS, ids=lambda args: " ".join(args[:2]))
def test_a_full_device_is_one_line_and_exit_74(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        child = start(args, stdout=full)
        _, err = child.communicate(timeout=HANG_SECONDS)
    assert child.returncode == EXIT_IO_ERROR, err
    assert err == "fencing: error: cannot write the output: No space left on device\n"


def test_an_output_file_on_a_full_device_is_one_line_and_exit_74() -> None:
    child = start(["export", "promela", "--output", "/dev/full"])
    out, err = child.communicate(timeout=HANG_SECONDS)
    assert (child.returncode, out) == (EXIT_IO_ERROR, "")
    assert err == "fencing: error: cannot write '/dev/full': No space left on device\n"


def closed_stdout(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the command with its standard output closed, as `fencing ... >&-` does."""
    return subprocess.run(
        ["/bin/sh", "-c", 'exec "$0" "$@" >&-', str(FENCING), *args],
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
        check=False,
    )


@pytest.mark.parametrize("args", WRITERS[:2] + WRITERS[-2:], ids=lambda args: " ".join(args[:2]))
@pytest.mark.slow
def test_a_closed_standard_output_is_one_line_and_exit_74(args: list[str]) -> None:
    """`fencing export promela >&-` used to exit 0 having written nothing."""
    done = closed_stdout(args)
    assert done.returncode == EXIT_IO_ERROR, done.stderr
    assert done.stderr == "fencing: error: cannot write the output: standard output is closed\n"


def test_a_closed_standard_output_is_fine_when_writing_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "model.pml"
    done = closed_stdout(["export", "promela", "-o", str(target)])
    assert (done.returncode, done.stderr) == (0, "")
    assert "active proctype system()" in target.read_text()


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    """`fencing presets --json | head -1`: exit 141 (as if by SIGPIPE), nothing on stderr."""
    child = start(["presets", "--json"])
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader is gone before the first write
    err = child.stderr.read()
    assert (child.wait(timeout=HANG_SECONDS), err) == (EXIT_BROKEN_PIPE, "")


# ----- budgets: one validator for every command that takes them ----------------------------

BAD_SECONDS = ["nan", "inf", "-inf", "-1", "0", "1e300", "86401", "abc", ""]
BAD_STATES = ["0", "-1", "nan", "1e3", "2.5", "99999999999999999", "many", ""]
BUDGETED = [
    ["check"],
    ["matrix"],
    ["prove"],
    ["export", "itf", "--property", "P1"],
]


@pytest.mark.parametrize("command", BUDGETED, ids=lambda command: " ".join(command[:2]))
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_every_bad_time_budget_is_one_line_and_exit_2(
    command: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*command, f"--max-seconds={value}"], capsys)
    assert (code, out) == (EXIT_USAGE, "")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "argument --max-seconds: must be a number of seconds above 0 and at most 86400" in err


@pytest.mark.parametrize("command", BUDGETED, ids=lambda command: " ".join(command[:2]))
@pytest.mark.parametrize("value", BAD_STATES)
def test_every_bad_state_budget_is_one_line_and_exit_2(
    command: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*command, f"--max-states={value}"], capsys)
    assert (code, out) == (EXIT_USAGE, "")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "argument --max-states: must be a whole number from 1 to 1,000,000,000,000,000" in err


def test_a_good_export_budget_is_used(capsys: pytest.CaptureFixture[str]) -> None:
    """`export itf` takes its budgets like `check`: a state budget too small stops the search."""
    args = ["export", "itf", "--receiver", "none", "--property", "P1", "--max-states", "20"]
    code, out, err = run(args, capsys)
    assert (code, out) == (1, "")
    assert "no counterexample of P1 to export: the search stopped (state budget of 20" in err
