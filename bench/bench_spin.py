"""The explorer beside spin on the same model: a ladder of core bounds from 0.3k to 17M states.

For each rung the core design is exported to Promela (`model.formats.promela`), compiled once,
and searched by pan (`-c0`, every assertion checked, nothing printed per state); the
explorer explores the same bounds in a fresh process, on two threads and on one. Printed
per rung: states and transitions (which must agree: pan counts one transition more, its
entry into the loop), the explorer's seconds and peak memory above its baseline, pan's
search-only seconds (spin and gcc not counted) and peak memory, and the ratios; below 2M states each
engine's best of three runs is shown, as other work on the machine adds noise. Then the explorer's
memory per state and, with `--big`, a run of about 100M states alone. Without spin the
pan columns are left out and the reason printed.

    .venv/bin/python bench/bench_spin.py [--quick] [--big]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fencing.spin import compile_pan, search, spin_available  # noqa: E402
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
"""About 100M states of the core: the explorer alone, to show it fits the machine."""

_ONE_RUN = """
import json, resource, sys, time
from model.design import Bounds, Design
from model.check.explorer import compile_loops, explore
from model.check.search import SearchOptions
explore(Design(), Bounds(3, 2, 6, 3, 2))  # loads the seen set's compiled loops
bounds = Bounds(*json.loads(sys.argv[1]))
threads = json.loads(sys.argv[2])
compiling = time.perf_counter()
compile_loops(Design(), bounds)  # the rules' loops: compiled, or loaded if compiled before
compiling = time.perf_counter() - compiling
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started, cpu = time.perf_counter(), time.process_time()
options = SearchOptions(max_states=10**9, max_seconds=10**6, threads=threads)
result = explore(Design(), bounds, options)
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"states": result.states, "transitions": result.transitions,
                  "seconds": seconds, "cpu": cpu, "compile": compiling,
                  "baseline_kib": baseline, "peak_kib": peak, "complete": result.complete}))
"""


def explore_in_fresh_process(bounds: Bounds, threads: int | None) -> dict[str, float]:
    """One exploration in its own interpreter, so its peak memory is its own."""
    sizes = [bounds.workers, bounds.lease, bounds.horizon, bounds.grants, bounds.writes]
    done = subprocess.run(
        [sys.executable, "-c", _ONE_RUN, json.dumps(sizes), json.dumps(threads)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def best_run(bounds: Bounds, threads: int, repeats: int) -> dict[str, float]:
    """The fastest of a few fresh-process explorations."""
    runs = [explore_in_fresh_process(bounds, threads) for _ in range(repeats)]
    return min(runs, key=lambda run: run["seconds"])


def main() -> None:
    """Print the side-by-side table, the two-thread gain, then the memory growth per state."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="stop below 2M states")
    parser.add_argument("--big", action="store_true", help="also explore ~100M states alone")
    args = parser.parse_args()
    ladder = [b for b in LADDER if not args.quick or b.workers < 4]
    with_spin = spin_available()
    if not with_spin:
        print("spin or gcc is not installed: pan's columns are left out")
    print("Core design: the explorer on two threads and on one, beside pan's search alone.")
    print("Both compile the model first (ours: the rules' loops, loaded when compiled before;")
    print("pan: spin -a and gcc), not counted in the search times. Seconds are wall-clock")
    print("(cpu: processor seconds, one thread); MiB is peak resident memory, the explorer's")
    print("above its baseline (interpreter, libraries and compiled loops loaded). Ratios are")
    print("ours / pan's: wall time with two threads and with one, cpu time, memory.")
    print(
        f"{'bounds':<21}{'states':>11}{'transitions':>12}{'comp':>6}{'2 thr':>7}{'1 thr':>7}"
        f"{'cpu':>7}{'MiB':>6} |{'comp':>6}{'pan s':>7}{'cpu':>7}{'MiB':>6} |{'2 thr':>6}"
        f"{'1 thr':>6}{'cpu':>6}{'mem':>6}"
    )
    growth = []
    for bounds in ladder:
        repeats = 3 if bounds.workers < 4 else 1
        first = explore_in_fresh_process(bounds, 2)  # compiles the rules' loops
        ours = min(
            [first] + [explore_in_fresh_process(bounds, 2) for _ in range(repeats - 1)],
            key=lambda run: run["seconds"],
        )
        single = best_run(bounds, 1, repeats)
        our_mib = (ours["peak_kib"] - ours["baseline_kib"]) / 1024
        growth.append((bounds, ours["states"], our_mib, single["seconds"] / ours["seconds"]))
        line = (
            f"{bounds.short():<21}{ours['states']:>11,}{ours['transitions']:>12,}"
            f"{first['compile']:>6.1f}{ours['seconds']:>7.2f}{single['seconds']:>7.2f}"
            f"{single['cpu']:>7.2f}{our_mib:>6.0f} |"
        )
        if with_spin:
            with tempfile.TemporaryDirectory() as folder:
                compiling = compile_pan(promela_model(Design(), bounds).text, Path(folder), False)
                pans = [search(Path(folder), int(ours["states"])) for _ in range(repeats)]
            pan = min(pans, key=lambda run: run.search_seconds)
            agree = pan.states == ours["states"] and pan.transitions == ours["transitions"] + 1
            line += (
                f"{compiling:>6.1f}{pan.search_seconds:>7.2f}{pan.cpu_seconds:>7.2f}"
                f"{pan.peak_rss_mib:>6.0f} |"
                f"{ours['seconds'] / pan.search_seconds:>6.2f}"
                f"{single['seconds'] / pan.search_seconds:>6.2f}"
                f"{single['cpu'] / max(pan.cpu_seconds, 0.01):>6.2f}"
                f"{our_mib / pan.peak_rss_mib:>6.2f}"
            )
            if not agree:
                line += (
                    f"  COUNTS DIFFER: pan {pan.states:,} states {pan.transitions:,} transitions"
                )
        print(line, flush=True)
    print("\nExplorer memory above its baseline per state, and what the second thread gains:")
    for bounds, states, mib, gain in growth:
        print(
            f"  {bounds.short():<21}{states:>12,} states {mib * 2**20 / states:>7.1f} bytes/state"
            f"   two threads {gain:.2f}x as fast as one"
        )
    if args.big:
        ours = explore_in_fresh_process(BIG, 2)
        mib = (ours["peak_kib"] - ours["baseline_kib"]) / 1024
        print(
            f"\n{BIG.short()}: {ours['states']:,} states in {ours['seconds']:.1f} s, "
            f"{mib / 1024:.2f} GiB above baseline ({mib * 2**20 / ours['states']:.1f} bytes "
            "per state)"
        )


if __name__ == "__main__":
    main()
