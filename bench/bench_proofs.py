"""Benchmark: z3 proofs and BMC over the preset table, with timings (prints, never asserts).

Run: PYTHONPATH=. python bench/bench_proofs.py [--timeout-ms N] [--presets a,b,...]
Prints, per preset at the reference bounds: BMC's verdict per property next to the
explorer's, with the method that closed it (bmc: a run or BMC to the explorer's depth;
ind: the bounded inductive invariant; kN: N-induction), the preset's time and the total;
then `prove` for fencing with W=2 and W=3.
"""

from __future__ import annotations

import argparse
import time
from typing import Final

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.presets import PRESETS
from proofs.bmc import HOLDS_WITHIN_BOUNDS, VIOLATED, BmcResult, bmc
from proofs.bounded import INDUCTION, K_INDUCTION
from proofs.report import format_report, prove

BMC_TIMEOUT_MS: Final = 30_000
"""Per-query wall-clock budget in the benchmark (a query beyond it reports `unknown`)."""


def cell(result: BmcResult) -> str:
    """A BMC verdict in a few characters: the shortest length, `holds` or `?`."""
    if result.status == VIOLATED:
        return str(result.shortest)
    return "holds" if result.status == HOLDS_WITHIN_BOUNDS else "?"


def method(result: BmcResult) -> str:
    """The method that closed a cell, in a few characters: bmc, ind or kN."""
    if result.method == K_INDUCTION:
        return f"k{result.k}"
    return "ind" if result.method == INDUCTION else "bmc"


def bmc_table(names: list[str], timeout_ms: int) -> float:
    """Print BMC against the explorer for each preset; return the total BMC seconds."""
    total = 0.0
    print(f"BMC at {REFERENCE_BOUNDS.short()} (per-query timeout {timeout_ms} ms)")
    print(f"{'preset':<28}{'depth':>6}  {'P1..P6 (bmc / explorer, method)':<90}{'seconds':>8}")
    for name in names:
        design = PRESETS[name].design
        exploration = explore(design, REFERENCE_BOUNDS)
        started = time.perf_counter()
        results = bmc(design, REFERENCE_BOUNDS, timeout_ms=timeout_ms)
        seconds = time.perf_counter() - started
        total += seconds
        cells = []
        for prop, verdict in exploration.verdicts.items():
            expected = str(verdict.shortest) if verdict.violated else "holds"
            got = cell(results[prop])
            mark = "" if got == expected else ("?" if got == "?" else " MISMATCH")
            cells.append(f"{prop}:{got}/{expected},{method(results[prop])}{mark}")
        print(f"{name:<28}{exploration.depth:>6}  {' '.join(cells):<90}{seconds:>8.1f}", flush=True)
    print(f"total BMC time {total:.1f} s")
    return total


def prove_fencing() -> None:
    """Time `prove` for the fencing preset with two and three workers."""
    for workers in (2, 3):
        bounds = Bounds(
            workers,
            REFERENCE_BOUNDS.lease,
            REFERENCE_BOUNDS.horizon,
            REFERENCE_BOUNDS.grants,
            REFERENCE_BOUNDS.writes,
        )
        started = time.perf_counter()
        report = prove(Design(), bounds)
        print(format_report(report))
        print(f"prove fencing W={workers}: {time.perf_counter() - started:.1f} s\n", flush=True)


def main() -> None:
    """Parse the options and run both benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout-ms", type=int, default=BMC_TIMEOUT_MS)
    parser.add_argument("--presets", default=",".join(PRESETS))
    args = parser.parse_args()
    bmc_table(args.presets.split(","), args.timeout_ms)
    prove_fencing()


if __name__ == "__main__":
    main()
