"""Benchmark: what running each web proof in its own worker process costs (prints only).

Run: PYTHONPATH=. python bench/bench_proof_jobs.py
Prints the round trip of an empty job, `os.getpid` (the first one also starts the fork
server), then per preset the proof's time in this process and as an isolated job, and their
difference.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Final

from model.design import Bounds
from model.presets import PRESETS
from webapp.jobs.proving import (
    WEB_PROVE_SECONDS,
    WEB_PROVE_STATES,
    proof_rows,
    prove_isolated,
    run_isolated,
)

BOUNDS: Final = Bounds(workers=2, lease=2, horizon=5, grants=2, writes=1)
NAMES: Final = ("lease-only", "fencing", "random-token", "rmw-fencing-fenced-reads")
ROUNDS: Final = 3


def seconds(start: float) -> float:
    """Seconds since `start`."""
    return time.perf_counter() - start


def empty_jobs() -> None:
    """The first empty job (starts the fork server) and the median of the next ones."""
    start = time.perf_counter()
    run_isolated(os.getpid, (), deadline=10)
    print(f"first empty job (starts the fork server): {seconds(start):.3f} s")
    times = []
    for _ in range(10):
        start = time.perf_counter()
        run_isolated(os.getpid, (), deadline=10)
        times.append(seconds(start))
    print(f"empty job, median of 10: {statistics.median(times):.3f} s")


def proofs() -> None:
    """Each preset's proof in this process and isolated, best of a few rounds."""
    print(f"{'preset':<28}{'in-process':>11}{'isolated':>10}{'overhead':>10}")
    for name in NAMES:
        design = PRESETS[name].design
        here, there = [], []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            proof_rows(design, BOUNDS, WEB_PROVE_STATES, WEB_PROVE_SECONDS)
            here.append(seconds(start))
            start = time.perf_counter()
            prove_isolated(
                design, BOUNDS, max_states=WEB_PROVE_STATES, max_seconds=WEB_PROVE_SECONDS
            )
            there.append(seconds(start))
        a, b = min(here), min(there)
        print(f"{name:<28}{a:>10.2f}s{b:>9.2f}s{b - a:>9.2f}s")


def main() -> None:
    """Both measurements."""
    empty_jobs()
    proofs()


if __name__ == "__main__":
    main()
