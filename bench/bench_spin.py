"""The explorer beside spin's pan on the same model: whole process against whole process.

For each rung of a ladder of core bounds (0.3k to 17M states) the core design is exported
to Promela (`model.formats.promela`) and pan is compiled once (`spin -a`, then gcc with `-O2
-DNOREDUCE -DSAFETY`); the explorer's engine is built once too (`compile_loops`), as pan's
gcc step is not timed either. Then pan (`./pan -c0 -n -m100 -w26`: every state, every
failing assertion counted, its report written to a file) and `fencing check` at the same
bounds (its usual report, `--json`) run in turn, each in a fresh process, several times.
Each row shows both engines' best and median wall-clock seconds, the ratio of the bests
(ours / pan's; below 1 the explorer is faster), the same ratio of processor seconds, and
the explorer's peak memory per state above its baseline (the peak of `fencing check` at
the smallest rung: interpreter, libraries, model). States must agree, and pan's
transitions are the explorer's plus one (its entry into the loop).

The machine's other work slows whichever engine runs beside it, so the runs alternate and
the best of each is compared; the load average before and after is printed, and the gap
between best and median says how noisy a row was. `--big` adds the core at 106M states (pan
too, with `-w28`, when the memory allows), `--billion` about a billion states of a preset
with five workers (the explorer alone: pan would need about 100 GB).

    .venv/bin/python bench/bench_spin.py [--quick] [--big] [--billion] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fencing.budget import available_bytes  # noqa: E402
from fencing.spin import compile_pan, spin_available  # noqa: E402
from model.design import Bounds, Design  # noqa: E402
from model.formats.promela import promela_model  # noqa: E402

LADDER = (
    Bounds(2, 2, 4, 2, 1),
    Bounds(3, 2, 6, 3, 2),
    Bounds(3, 3, 10, 5, 2),
    Bounds(3, 3, 14, 7, 2),
    Bounds(4, 3, 12, 6, 2),
    Bounds(4, 3, 14, 7, 2),
)
BIG = Bounds(4, 3, 20, 8, 2)
"""106,315,629 states of the core."""
BILLION = ("key-version-token", Bounds(5, 3, 16, 8, 2))
"""About a billion states: five workers of a preset whose tokens take few values (the
explorer alone; pan would need about 100 GB)."""
PAN_FLAGS = ("-c0", "-n", "-m100", "-w26")
PER_STATE_FROM = 100_000
"""Memory per state is shown from this many states (below, a few MiB of noise dominate)."""
PAN_BYTES_PER_STATE = 100
"""pan's peak per stored state at 17M states (its states plus its hash table), about 96."""


@dataclass(frozen=True)
class Run:
    """One whole process: its wall-clock and processor seconds, peak memory and output."""

    seconds: float
    cpu: float
    peak_mib: float
    output: str


KEPT_OUTPUT = 1 << 20
"""Characters of a run's output kept (its end): pan's report of every failing assertion
runs to hundreds of MB on large rungs, and its counts come last."""
_LAUNCH = """
import json, os, sys, time
started = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
with open(sys.argv[1], "w") as figures:
    json.dump({"status": os.waitstatus_to_exitcode(status), "seconds": seconds,
               "cpu": usage.ru_utime + usage.ru_stime, "peak_kib": usage.ru_maxrss}, figures)
"""
"""Runs a command and writes its figures. A process started by a large one counts that
one's memory in its own peak (Linux keeps the peak across exec), so every measured
process is started by this small launcher instead of by the benchmark itself."""


def run_process(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run a command to its end, through the small launcher; its output goes through a
    file, of which the last `KEPT_OUTPUT` characters are kept."""
    with tempfile.TemporaryDirectory(prefix="bench-spin-") as scratch:
        figures, output = Path(scratch) / "figures.json", Path(scratch) / "output"
        launcher = [sys.executable, "-S", "-c", _LAUNCH, str(figures), *command]
        with output.open("w") as out:
            subprocess.run(launcher, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        with output.open("rb") as out:
            out.seek(max(0, output.stat().st_size - KEPT_OUTPUT))
            text = out.read().decode(errors="replace")
        measured = json.loads(figures.read_text()) if figures.exists() else {"status": -1}
    if measured["status"] != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{text[-2000:]}")
    return Run(measured["seconds"], measured["cpu"], measured["peak_kib"] / 1024, text)


def bounds_flags(bounds: Bounds) -> list[str]:
    """`fencing check`'s flags for these bounds."""
    return [
        *("--workers", str(bounds.workers), "--lease", str(bounds.lease)),
        *("--horizon", str(bounds.horizon), "--grants", str(bounds.grants)),
        *("--writes", str(bounds.writes)),
    ]


def explorer_env() -> dict[str, str]:
    """The environment of an installed tool: Python keeps its compiled bytecode."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def explorer_run(bounds: Bounds, max_states: int | None = None) -> tuple[Run, dict]:
    """`fencing check` at these bounds in a fresh process, and its JSON report."""
    command = [sys.executable, "-m", "fencing.cli", "check", *bounds_flags(bounds)]
    command += ["--max-seconds", "86400", "--json"]
    if max_states is not None:
        command += ["--max-states", str(max_states)]
    run = run_process(command, ROOT, explorer_env())
    report = json.loads(run.output[run.output.index("{") :])
    return run, report


def build_explorer(bounds: Bounds) -> float:
    """Build (or load) the explorer's engine for these bounds; the seconds it took."""
    started = time.perf_counter()
    code = (
        "import sys; from model.design import Bounds, Design; "
        "from model.check.explorer import compile_loops; "
        "compile_loops(Design(), Bounds(*map(int, sys.argv[1:])))"
    )
    sizes = [bounds.workers, bounds.lease, bounds.horizon, bounds.grants, bounds.writes]
    run_process([sys.executable, "-c", code, *map(str, sizes)], ROOT, explorer_env())
    return time.perf_counter() - started


@dataclass(frozen=True)
class PanCount:
    """A count from pan's report: pan prints large counts with nine significant digits
    (`1.06315629e+08`), so a count is known to within half its last digit."""

    value: float
    last_digit: float

    @staticmethod
    def parse(text: str) -> PanCount:
        """`123456` or `1.23456789e+09`."""
        mantissa, _, exponent = text.partition("e")
        decimals = len(mantissa.partition(".")[2])
        return PanCount(float(text), 10.0 ** (int(exponent or 0) - decimals))

    def agrees(self, count: int) -> bool:
        """Whether an exact count is the one pan printed."""
        return abs(self.value - count) <= self.last_digit / 2


def pan_counts(report: str) -> tuple[PanCount, PanCount]:
    """States stored and transitions from pan's report."""
    number = r"(\d+(?:\.\d+)?(?:e[+-]?\d+)?)"
    states = re.search(number + r" states, stored", report)
    transitions = re.search(number + r" transitions \(= stored\+matched\)", report)
    if states is None or transitions is None:
        raise RuntimeError(f"pan's report has no counts:\n{report[-2000:]}")
    return PanCount.parse(states.group(1)), PanCount.parse(transitions.group(1))


def pan_run(folder: Path, flags: tuple[str, ...]) -> tuple[Run, tuple[PanCount, PanCount]]:
    """pan in a fresh process; its run and its counts."""
    run = run_process(["./pan", *flags], folder)
    return run, pan_counts(run.output)


def spread(runs: list[Run]) -> tuple[float, float]:
    """The best and the median wall-clock seconds of some runs."""
    seconds = [run.seconds for run in runs]
    return min(seconds), statistics.median(seconds)


def load() -> str:
    """The last minute's load average (runnable processes on this machine)."""
    return f"{os.getloadavg()[0]:.1f}"


HEADER = (
    f"{'bounds':<21}{'states':>13} |{'pan best':>9}{'median':>8}{'MiB':>7} |"
    f"{'ours best':>10}{'median':>8}{'B/state':>8} |{'ratio':>6}{'cpu':>6}"
)


def compare(bounds: Bounds, repeats: int, baseline_mib: float, pan_flags: tuple[str, ...]) -> str:
    """One row: pan and the explorer alternately, `repeats` times each."""
    build_explorer(bounds)
    ours: list[Run] = []
    pans: list[Run] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        compile_pan(promela_model(Design(), bounds).text, folder, False)
        report: dict = {}
        counts = (PanCount(0, 1), PanCount(0, 1))
        for _ in range(repeats):
            pan, counts = pan_run(folder, pan_flags)
            pans.append(pan)
            run, report = explorer_run(bounds)
            ours.append(run)
    pan_best, pan_median = spread(pans)
    our_best, our_median = spread(ours)
    states = int(report["states"])
    peak = min(run.peak_mib for run in ours)
    per_state = (peak - baseline_mib) * 2**20 / states
    bytes_shown = f"{per_state:>8.1f}" if states >= PER_STATE_FROM else f"{'-':>8}"
    cpu_ratio = min(r.cpu for r in ours) / max(min(r.cpu for r in pans), 1e-3)
    line = (
        f"{bounds.short():<21}{states:>13,} |{pan_best:>9.2f}{pan_median:>8.2f}"
        f"{min(r.peak_mib for r in pans):>7.0f} |{our_best:>10.2f}{our_median:>8.2f}"
        f"{bytes_shown} |{our_best / pan_best:>6.2f}{cpu_ratio:>6.2f}"
    )
    pan_states, pan_transitions = counts
    if not (pan_states.agrees(states) and pan_transitions.agrees(int(report["transitions"]) + 1)):
        line += (
            f"  COUNTS DIFFER: pan {pan_states.value:,.0f} states, "
            f"{pan_transitions.value:,.0f} transitions"
        )
    return line


_ALONE = """
import json, resource, sys, time
from model.design import Bounds, Design
from model.check.explorer import compile_loops, explore
from model.presets import PRESETS
from model.check.search import SearchOptions
design = PRESETS[sys.argv[1]].design if sys.argv[1] != "core" else Design()
bounds = Bounds(*json.loads(sys.argv[2]))
compile_loops(design, bounds)
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started, cpu = time.perf_counter(), time.process_time()
options = SearchOptions(max_states=json.loads(sys.argv[3]), max_seconds=10**6)
result = explore(design, bounds, options)
print(json.dumps({"states": result.states, "transitions": result.transitions,
                  "complete": result.complete, "seconds": time.perf_counter() - started,
                  "cpu": time.process_time() - cpu, "baseline_kib": baseline,
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""
ALONE_STATES = 1_500_000_000
"""The state budget of a run alone (about 20 GiB of the explorer's memory at most)."""


def alone(name: str, bounds: Bounds) -> str:
    """The explorer alone on a preset (or "core") at large bounds, through the library with
    a state budget of its own (the command line's budget allows 40 bytes a state, for
    every engine): states, seconds, memory above the process's own baseline (its libraries
    and engine loaded)."""
    sizes = [bounds.workers, bounds.lease, bounds.horizon, bounds.grants, bounds.writes]
    command = [sys.executable, "-c", _ALONE, name, json.dumps(sizes), str(ALONE_STATES)]
    run = run_process(command, ROOT, explorer_env())
    figures = json.loads(run.output.strip().splitlines()[-1])
    states = int(figures["states"])
    mib = (figures["peak_kib"] - figures["baseline_kib"]) / 1024
    return (
        f"{name} at {bounds.short()}: {states:,} states, "
        f"{int(figures['transitions']):,} transitions, "
        f"{'complete' if figures['complete'] else 'INCOMPLETE'}, in {figures['seconds']:.0f} s "
        f"({figures['cpu']:.0f} s of processor time), {mib / 1024:.2f} GiB above the "
        f"baseline ({mib * 2**20 / states:.1f} bytes per state)"
    )


def main() -> None:
    """Print the side-by-side table, then the large runs asked for."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="stop below 1M states")
    parser.add_argument("--big", action="store_true", help="also the core at 106M states")
    parser.add_argument("--billion", action="store_true", help="also about 1e9 states")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each engine per rung")
    args = parser.parse_args()
    if not spin_available():
        print("spin or gcc is not installed: the comparison with pan is left out")
        return
    ladder = LADDER[:3] if args.quick else LADDER
    print("Core design, whole processes: pan (-O2 -DNOREDUCE -DSAFETY; ./pan -c0 -n -m100 -w26)")
    print("and `fencing check --json`, alternately, each engine's model compiled beforehand.")
    print("Seconds are wall-clock (best and median of the runs), MiB pan's peak memory,")
    print("B/state the explorer's peak memory per state above its baseline; ratios are")
    print("ours / pan's best wall-clock and best processor seconds.")
    print(f"Load average at the start: {load()} (2 would keep both cores busy).")
    baseline_mib = min(explorer_run(LADDER[0])[0].peak_mib for _ in range(2))
    print(HEADER)
    for bounds in ladder:
        repeats = max(1, args.repeats if bounds != LADDER[-1] else min(args.repeats, 3))
        print(compare(bounds, repeats, baseline_mib, PAN_FLAGS), flush=True)
    if args.big:
        if available_bytes() > 106_315_629 * PAN_BYTES_PER_STATE * 1.2:
            print(compare(BIG, 1, baseline_mib, ("-c0", "-n", "-m1000", "-w28")), flush=True)
        else:
            print(alone("core", BIG), flush=True)
    print(f"Load average at the end: {load()}; baseline {baseline_mib:.0f} MiB.")
    if args.billion:
        print(alone(*BILLION), flush=True)


if __name__ == "__main__":
    main()
