"""Run the real spin on an exported model: generate pan, compile it, search, read the counts.

Used by the tests (spin's states and verdicts must equal the explorer's) and by the
benchmark (pan's search time beside the explorer's). `spin -a` writes the verifier's C
source, gcc compiles it, and pan searches with `-c0` so that it counts every state and
every failing assertion instead of stopping at the first (its report goes to a file).
Compiled with `-DBFS`, pan
reports each failure at the breadth-first depth of its source state, so the shortest
violation of a property is that depth plus one step.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from model.formats.promela import MARKER

SPIN: Final = "spin"
MODEL_FILE: Final = "model.pml"
REPORT_FILE: Final = "pan.out"
_ERROR = re.compile(rf"assertion violated \({MARKER}(P\d)\|\|.*\(at depth (\d+)\)")


class SpinError(RuntimeError):
    """Spin, gcc or pan failed; the message carries their output."""


@dataclass(frozen=True)
class SpinResult:
    """What pan reported for one full search."""

    states: int
    transitions: int
    errors: int
    shortest: dict[str, int]
    """Per violated property, the fewest steps to a violation (breadth-first runs only)."""
    violated: frozenset[str]
    compile_seconds: float
    search_seconds: float
    """Wall-clock time of pan's search alone (spin and gcc not counted)."""
    memory_mib: float
    """pan's own figure: total actual memory usage."""
    peak_rss_mib: float = 0.0
    """The operating system's figure: pan's peak resident memory."""
    cpu_seconds: float = 0.0
    """Processor time pan used (user and system), less sensitive to other work than wall time."""


def spin_available() -> bool:
    """Whether spin and a C compiler are installed."""
    return shutil.which(SPIN) is not None and shutil.which("gcc") is not None


def _run(command: list[str], folder: Path, timeout: float) -> str:
    """Run one tool in the folder; its output, or a SpinError with it."""
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise SpinError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def _number(pattern: str, text: str) -> float:
    """The number pan printed after a label."""
    found = re.search(pattern, text)
    if found is None:
        raise SpinError(f"pan's report has no {pattern!r}:\n{text[-2000:]}")
    return float(found.group(1))


def compile_pan(
    model: str, folder: Path, breadth_first: bool, timeout: float = 300, optimize: bool = True
) -> float:
    """Write the model, generate pan with spin and compile it; the seconds it took.

    `optimize=False` compiles without gcc's optimizer: four times quicker to build, the same
    search, for models so small that building pan takes longer than its search.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MODEL_FILE).write_text(model)
    started = time.perf_counter()
    _run([SPIN, "-a", MODEL_FILE], folder, timeout)
    flags = ["-O2" if optimize else "-O0", "-DSAFETY", "-DNOREDUCE", "-DMEMLIM=20000"]
    if breadth_first:
        flags.append("-DBFS")
    _run(["gcc", *flags, "-o", "pan", "pan.c"], folder, timeout)
    return time.perf_counter() - started


def search(folder: Path, expected_states: int = 1_000_000, timeout: float = 3600) -> SpinResult:
    """Run the compiled pan over the whole state space and read its report.

    pan writes its report to a file (a line per failing assertion can run to millions);
    its peak memory is the operating system's figure for the pan process.
    """
    hash_bits = max(18, min(32, (2 * expected_states).bit_length()))
    report_path = folder / REPORT_FILE
    command = ["./pan", "-c0", "-n", f"-w{hash_bits}", "-m100000"]
    started = time.perf_counter()
    with report_path.open("w") as report_file:
        process = subprocess.Popen(
            command, cwd=folder, stdout=report_file, stderr=subprocess.STDOUT
        )
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:
            process.kill()
            raise
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    shortest: dict[str, int] = {}
    summary: list[str] = []
    with report_path.open() as report:
        for line in report:
            found = _ERROR.search(line)
            if found:
                name, depth = found.group(1), int(found.group(2)) + 1
                shortest[name] = min(shortest.get(name, depth), depth)
            elif not line.startswith("pan:") or "elapsed" in line:
                summary.append(line)
    text = "".join(summary)
    if process.returncode != 0:
        raise SpinError(f"pan failed with status {process.returncode}:\n{text[-2000:]}")
    return SpinResult(
        states=int(_number(r"(\d+) states, stored", text)),
        transitions=int(_number(r"(\d+) transitions \(= stored\+matched\)", text)),
        errors=int(_number(r"errors: (\d+)", text)),
        shortest=shortest,
        violated=frozenset(shortest),
        compile_seconds=0.0,
        search_seconds=seconds,
        memory_mib=_number(r"([\d.]+)\s+total actual memory usage", text),
        peak_rss_mib=usage.ru_maxrss / 1024,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
    )


def check_with_spin(
    model: str,
    folder: Path,
    breadth_first: bool = True,
    expected_states: int = 1_000_000,
    optimize: bool = True,
) -> SpinResult:
    """Compile and run pan on a model: counts, violated properties, times and memory."""
    compiled = compile_pan(model, folder, breadth_first, optimize=optimize)
    result = search(folder, expected_states)
    return SpinResult(**{**result.__dict__, "compile_seconds": compiled})
