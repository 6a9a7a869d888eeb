"""Live lab figures on PostgreSQL (printed, not pass/fail): how long the lab's PostgreSQL
takes to make (initdb), to start and to start again after a kill (crash recovery), the wall
time of each scripted scenario on postgres beside sqlite, and what check-then-write does on
the real database in randomized runs (applies that set the mark down, P1 violations).

Targets: initdb and a start together under 1 s; a scripted scenario on postgres within
1 s of the same scenario on sqlite.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.etcd import EtcdServer  # noqa: E402
from lab.experiment import run_randomized, run_scenario  # noqa: E402
from lab.postgres import Cluster, PostgresServer, missing  # noqa: E402
from lab.report import LabReport  # noqa: E402
from lab.scenarios import SCENARIOS_LIST  # noqa: E402
from lab.settings import Settings  # noqa: E402

STARTS = 3
START_TARGET_S = 1.0
SCENARIO_EXTRA_TARGET_S = 1.0
RANDOM_SECONDS = 6.0
SEEDS = (1, 2, 3)


def start_times() -> list[tuple[float, float, float]]:
    """Per cluster: initdb seconds, start-to-first-answer, start again after SIGKILL."""
    found = []
    for _ in range(STARTS):
        began = time.perf_counter()
        cluster = Cluster.create()
        made = time.perf_counter() - began
        try:
            server = PostgresServer(cluster).start()
            first = server.start_seconds
            server.kill()
            again = server.start().start_seconds
            server.stop()
        finally:
            cluster.remove()
        found.append((made, first, again))
    return found


def lowered(report: LabReport) -> int:
    """Applies that set the mark below what it was (a stale write that passed its check)."""
    return sum(
        1
        for e in report.line.events
        if e.kind == "apply"
        and e.get("mark_before") is not None
        and int(e.get("mark_after")) < int(e.get("mark_before"))
    )


def print_starts() -> None:
    """The start figures."""
    starts = start_times()
    made, first, again = (sorted(column) for column in zip(*starts, strict=True))
    both = max(m + f for m, f, _ in starts)
    print(f"PostgreSQL 15 for the lab's store, {STARTS} clusters:")
    print(f"  initdb: median {statistics.median(made):.3f} s, max {max(made):.3f} s")
    print(f"  start to first answer: median {statistics.median(first):.3f} s")
    print(f"  start after a kill (crash recovery): median {statistics.median(again):.3f} s")
    print(f"  initdb + start, slowest: {both:.3f} s ({both / START_TARGET_S:.2f} of target)")


def main() -> None:
    """Print the figures."""
    problem = missing()
    if problem:
        print(f"PostgreSQL figures skipped: {problem}")
        return
    print_starts()
    with EtcdServer() as server:
        assert server.endpoint is not None
        print("\nScripted scenarios (default design), wall time, sqlite then postgres:")
        for item in SCENARIOS_LIST:
            took = {}
            for database in ("sqlite", "postgres"):
                started = time.perf_counter()
                report = run_scenario(server.endpoint, item.name, item.settings(database=database))
                took[database] = time.perf_counter() - started
                assert report.prediction_agrees, report.text()
            extra = took["postgres"] - took["sqlite"]
            print(
                f"  {item.name:<17} {took['sqlite']:5.2f} s  {took['postgres']:5.2f} s  "
                f"(+{extra:.2f} s: {extra / SCENARIO_EXTRA_TARGET_S:.2f} of target)"
            )
        print(
            f"\nRandomized fenced-nonatomic runs, 3 workers x 3 writes, {RANDOM_SECONDS:g} s, "
            "2 pauses/s, 50 ms between check and write:"
        )
        for database in ("sqlite", "postgres"):
            for seed in SEEDS:
                settings = Settings(
                    receiver="fenced-nonatomic",
                    workers=3,
                    writes=3,
                    seconds=RANDOM_SECONDS,
                    pause_rate=2.0,
                    seed=seed,
                    database=database,
                )
                report = run_randomized(server.endpoint, settings)
                c = report.counts
                print(
                    f"  {database:<8} seed {seed}: {c.operations} writes, {c.accepted} accepted, "
                    f"{lowered(report)} set the mark down, P1 {report.properties['P1'].count}, "
                    f"history {'refused' if report.refused else 'ok'}"
                )


if __name__ == "__main__":
    main()
