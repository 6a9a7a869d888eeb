"""Lock service figures (printed, not pass/fail): each service's start time, and the wall
time of every scripted scenario on each lock service.

ZooKeeper starts a JVM, Redis a small server; etcd's lock API runs on the lab's etcd. A
service this machine cannot run is named and skipped.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.etcd import EtcdServer  # noqa: E402
from lab.experiment import run_scenario  # noqa: E402
from lab.lock_servers import ServiceServer, missing_requirement, server_for  # noqa: E402
from lab.lock_table import SERVICE_NAMES  # noqa: E402
from lab.scenarios import SCENARIO_NAMES, scenario  # noqa: E402

STARTS = 3


def start_times(service: str) -> list[float]:
    """Seconds from starting the service to its first answer, a few times."""
    times = []
    for _ in range(STARTS):
        server = server_for(service)
        if server is None:
            with EtcdServer() as etcd:
                times.append(etcd.start_seconds)
            continue
        with server:
            times.append(server.start_seconds)
    return times


def scenario_times(service: str, server: ServiceServer | None, etcd: EtcdServer) -> None:
    """The wall time of each scripted scenario on one service, and whether it agreed."""
    assert etcd.endpoint is not None
    for name in SCENARIO_NAMES:
        settings = scenario(name).settings(lock_service=service)
        started = time.perf_counter()
        report = run_scenario(etcd.endpoint, name, settings, None, service=server)
        seconds = time.perf_counter() - started
        agrees = "agrees" if report.prediction_agrees else "differs"
        verdict = "refused" if report.refused else "conforms"
        print(f"  {service:<14} {name:<17} {seconds:5.2f} s  {agrees}, {verdict}")


def main() -> None:
    """Print every figure."""
    print(f"Lock service start (to first answer), {STARTS} starts each:")
    available = []
    for service in SERVICE_NAMES:
        missing = missing_requirement(service)
        if missing:
            print(f"  {service:<14} skipped: {missing}")
            continue
        available.append(service)
        times = start_times(service)
        print(
            f"  {service:<14} fastest {min(times):.3f} s, median {statistics.median(times):.3f} s"
        )
    print("Scripted scenarios per lock service (wall time, model's prediction, conformance):")
    with EtcdServer() as etcd:
        for service in available:
            server = server_for(service)
            if server is None:
                scenario_times(service, None, etcd)
                continue
            with server:
                scenario_times(service, server, etcd)


if __name__ == "__main__":
    main()
