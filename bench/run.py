"""`make bench`: speed and memory figures of the explorer and the matrix (not pass/fail).

Prints the start-up time of a small `fencing check` (target: 0.2 s), states per second
and peak memory for the benchmark design
(W=3 L=3 T=10 G=5 K=2, fenced, 180,216 states; target: at most 1 s and under 300 MB),
the same with symmetry reduction, every preset at those bounds, and `fencing matrix` at
the reference bounds (target: under 10 s), and the random and Hypothesis searches at the
reference bounds (their seconds, their steps per second, the runs they show beside the
shortest). Other `bench_*.py` scripts beside this one are run after it
(`bench_random_walk.py`: the random walk beside the Hypothesis search and TLC's
simulation mode).
"""

from __future__ import annotations

import resource
import runpy
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fencing.golden import BENCHMARK  # noqa: E402
from fencing.matrix import verdict_matrix  # noqa: E402
from model.check.explorer import Exploration, explore  # noqa: E402
from model.check.search import SearchOptions  # noqa: E402
from model.design import REFERENCE_BOUNDS, Bounds, Design  # noqa: E402
from model.presets import PRESETS_LIST  # noqa: E402

BENCH_BOUNDS = BENCHMARK
REPEATS = 3
STARTS = 10
SMALL_CHECK = ("check", "--preset", "fencing")
"""A 321-state check: its time is almost all start-up (interpreter and imports)."""


def startup_seconds() -> list[float]:
    """Wall-clock seconds of a whole small `fencing check` process, one per start."""
    times = []
    for _ in range(STARTS):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "fencing.cli", *SMALL_CHECK],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - started)
    return times


def print_startup() -> None:
    """The start-up figures: fastest and median of `STARTS` processes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    times = startup_seconds()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / STARTS
    print(f"Start-up: `fencing {' '.join(SMALL_CHECK)}` (321 states), {STARTS} processes")
    print(
        f"  fastest {min(times):.3f} s, median {statistics.median(times):.3f} s, "
        f"{cpu:.3f} s of processor time each (target 0.2 s: {min(times) / 0.2:.2f} of it)\n"
    )


def best_of(design: Design, bounds: Bounds, symmetry: bool = False) -> tuple[Exploration, float]:
    """The fastest of a few runs (the first includes warm-up)."""
    times, result = [], None
    for _ in range(REPEATS):
        started = time.perf_counter()
        result = explore(design, bounds, SearchOptions(symmetry=symmetry))
        times.append(time.perf_counter() - started)
    assert result is not None
    return result, min(times)


def traced_peak_mb(design: Design, bounds: Bounds) -> float:
    """Peak Python-and-numpy allocation of one exploration, in MB."""
    tracemalloc.start()
    explore(design, bounds)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def print_random_search() -> None:
    """Per preset at the reference bounds, `fencing check --strategy random` and
    `--strategy hypothesis` as they run by default: seconds (compiling included), for the
    random search the steps walked per second (the Hypothesis search's own rate is in
    `bench_random_walk.py`: here its steps mix Hypothesis' runs with the shrinker's
    compiled ones), and the length of each run shown beside the breadth-first search's
    shortest (for Hypothesis also the length its own shrinking reached)."""
    from model.check.hypothesis_search import DEFAULT_RUNS as HYPOTHESIS_RUNS
    from model.check.hypothesis_search import hypothesis_search
    from model.check.random_search import DEFAULT_RUNS, random_search

    searches = (
        ("random", DEFAULT_RUNS, random_search),
        ("hypothesis", HYPOTHESIS_RUNS, hypothesis_search),
    )
    for strategy, runs, search in searches:
        print(
            f"\n--strategy {strategy} at {REFERENCE_BOUNDS.short()}, {runs:,} runs per "
            "property, seed 0: runs shown / shortest"
            + (" (after Hypothesis' own shrinking)" if strategy == "hypothesis" else "")
        )
        worst = 0
        for preset in PRESETS_LIST:
            shortest = explore(preset.design, REFERENCE_BOUNDS).verdicts
            found = search(preset.design, REFERENCE_BOUNDS, seed=0)
            walked = found.steps + found.shrink_steps
            rate = f"{walked / found.seconds:>12,.0f} steps/s" if strategy == "random" else ""
            lengths = []
            for name, verdict in found.verdicts.items():
                if verdict.violated:
                    tried = found.tried[name]
                    before = f" ({tried.hypothesis})" if tried.hypothesis is not None else ""
                    lengths.append(f"{name} {verdict.shortest}/{shortest[name].shortest}{before}")
                    worst = max(worst, (verdict.shortest or 0) - (shortest[name].shortest or 0))
            missed = [
                n for n, v in shortest.items() if v.violated and not found.verdicts[n].violated
            ]
            stopped = f"  stopped: {found.stopped_by}" if found.stopped_by else ""
            print(
                f"  {preset.name:<28} {found.seconds:6.2f} s {rate}  {' '.join(lengths) or '-'}"
                + (f"  missed {', '.join(missed)}" if missed else "")
                + stopped
            )
        print(f"  most steps a run shown has beyond the shortest: {worst}")


def main() -> None:
    """Print the figures and their ratios to the targets."""
    print_startup()
    print(f"Explorer benchmark, core design at {BENCH_BOUNDS.short()}")
    result, seconds = best_of(Design(), BENCH_BOUNDS)
    print(f"  states {result.states:,}  transitions {result.transitions:,}  depth {result.depth}")
    print(f"  best of {REPEATS}: {seconds:.3f} s  ->  {result.states / seconds:,.0f} states/s")
    print(f"  target 1 s: {seconds / 1.0:.2f} of the budget")
    peak = traced_peak_mb(Design(), BENCH_BOUNDS)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak traced allocation {peak:.1f} MB; process peak RSS {rss:.0f} MB (target 300 MB)")
    reduced, sym_seconds = best_of(Design(), BENCH_BOUNDS, symmetry=True)
    print(
        f"  with symmetry: {reduced.states:,} orbits in {sym_seconds:.3f} s "
        f"({result.states / reduced.states:.2f}x fewer states)"
    )
    print(f"\nEvery preset at {BENCH_BOUNDS.short()}")
    slowest = 0.0
    for preset in PRESETS_LIST:
        explored, took = best_of(preset.design, BENCH_BOUNDS)
        slowest = max(slowest, took)
        print(
            f"  {preset.name:<28} {explored.states:>10,} states {took:>7.3f} s "
            f"{explored.states / took:>12,.0f} states/s"
        )
    print(f"  slowest preset: {slowest:.3f} s")
    started = time.perf_counter()
    verdict_matrix(REFERENCE_BOUNDS)
    took = time.perf_counter() - started
    print(f"\nfencing matrix at {REFERENCE_BOUNDS.short()}: {took:.2f} s (target 10 s)")
    print_random_search()
    for script in sorted(Path(__file__).parent.glob("bench_*.py")):
        print(f"\n== {script.name} ==", flush=True)
        runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
