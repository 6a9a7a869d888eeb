"""Live lab nemesis figures (printed, not pass/fail): the three-member etcd cluster's start
time, the wall time of a randomized run with every fault kind on it, and how much of
randomized runs the model's replay covers (segment by segment) and how long that takes.

Targets: the cluster is healthy, with its first member leading, within 3 s; a randomized
run takes its duration plus a few seconds of start and wind-down; the replay covers all of
a run's grants and writes when pauses and holds leave points to cut it at.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.cluster import EtcdCluster  # noqa: E402
from lab.conformance import check_conformance  # noqa: E402
from lab.etcd import EtcdServer  # noqa: E402
from lab.experiment import run_randomized  # noqa: E402
from lab.report import LabReport  # noqa: E402
from lab.settings import FAULT_KINDS, Settings  # noqa: E402

CLUSTER_STARTS = 3
CLUSTER_TARGET_S = 3.0
EVERY_KIND = Settings(
    receiver="fenced",
    hwm="volatile",
    workers=4,
    writes=2,
    seconds=10,
    pause_rate=1.0,
    seed=1,
    faults=",".join(FAULT_KINDS),
    members=3,
)
COVERAGE_SECONDS = 30.0
COVERAGE_RUNS = (
    Settings(receiver="none", workers=3, writes=3, seconds=COVERAGE_SECONDS, pause_rate=2, seed=1),
    Settings(
        receiver="fenced", workers=3, writes=3, seconds=COVERAGE_SECONDS, pause_rate=2, seed=1
    ),
    Settings(
        receiver="fenced",
        workers=3,
        writes=3,
        seconds=COVERAGE_SECONDS,
        pause_rate=2,
        seed=1,
        faults="pause,hold",
    ),
)


def coverage_line(report: LabReport) -> str:
    """What the replay covered of a run, and how long the replay took."""
    started = time.perf_counter()
    check_conformance(report.line, report.witnessed.unknown)
    took = time.perf_counter() - started
    c = report.conformance
    assert c.coverage is not None
    s = report.history.settings
    return (
        f"  {s.receiver:<8} {s.faults:<11} {c.coverage.sentence()}; "
        f"{'allowed' if c.allowed else c.verdict()[:60]}; replay {took:.2f} s"
    )


def main() -> None:
    """Print the figures."""
    starts = []
    for _ in range(CLUSTER_STARTS):
        with EtcdCluster(3) as cluster:
            starts.append(cluster.start_seconds)
    print(f"Three-member etcd cluster start (to healthy, first member leading), {CLUSTER_STARTS}x:")
    print(
        f"  median {statistics.median(starts):.3f} s, max {max(starts):.3f} s "
        f"(target {CLUSTER_TARGET_S:g} s: {max(starts) / CLUSTER_TARGET_S:.2f} of it)"
    )
    with EtcdCluster(3) as cluster:
        started = time.perf_counter()
        report = run_randomized(cluster.endpoint, EVERY_KIND)
        wall = time.perf_counter() - started
    print(f"\nRandomized run, every fault kind, 3 members, {EVERY_KIND.seconds:g} s planned:")
    print(f"  wall time {wall:.2f} s (with start-up, wind-down and the model's replay)")
    print(f"  {report.nemesis_lines()[0].strip()}")
    print(f"  {coverage_line(report).strip()}")
    print(f"\nCoverage of {COVERAGE_SECONDS:g}-second randomized runs (seed 1, one member):")
    with EtcdServer() as server:
        assert server.endpoint is not None
        for settings in COVERAGE_RUNS:
            print(coverage_line(run_randomized(server.endpoint, settings)))


if __name__ == "__main__":
    main()
