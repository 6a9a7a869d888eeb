"""Live lab under faults (printed, not pass/fail): how long a run takes to see that a process
it started died, and how large the history of a 60-second randomized run is.

Targets: a dead etcd, storage process or worker is seen within 0.1 s when the lab started it
(its process is watched), within 2 s for an etcd given by address (seen by its unanswered
status requests); the busiest 60-second run's history is under the replay limit.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.etcd import Endpoint, EtcdServer, parse_endpoint  # noqa: E402
from lab.experiment import run_randomized  # noqa: E402
from lab.runner import REPLAY_LIMIT_BYTES, LabRun, LabStopped  # noqa: E402
from lab.settings import LabError, Settings  # noqa: E402

REPEATS = 3
LOCAL_TARGET_S = 0.1
GIVEN_TARGET_S = 2.0
SIZE_SECONDS = 60.0
BUSIEST = Settings(
    receiver="fenced-nonatomic", workload="rmw", workers=5, writes=4, gap=0.0, seconds=60
)
DEFAULT = Settings(receiver="none", workers=3, writes=3, pause_rate=2.0, seconds=60, seed=1)


class Watch:
    """Remembers the run in progress and when its first check of its processes failed."""

    def __init__(self) -> None:
        self.run: LabRun | None = None
        self.seen: float | None = None
        original = LabRun.check_processes

        def timed(run: LabRun, finished_ok: bool = False) -> None:
            self.run = run
            try:
                original(run, finished_ok)
            except LabError:
                if self.seen is None:
                    self.seen = time.monotonic()
                raise

        LabRun.check_processes = timed  # type: ignore[method-assign]

    def wait_for_writes(self, writes: int = 3) -> LabRun:
        """The run, once its store has decided a few writes."""
        while True:
            run = self.run
            if run is not None:
                log = run.directory / "storage.jsonl"
                if log.is_file() and log.read_text().count('"op": "write"') >= writes:
                    return run
            time.sleep(0.01)


def detection(endpoint: Endpoint, victim: Callable[[LabRun], int]) -> tuple[float, float]:
    """Kill the process `victim` names mid-run: seconds until the run saw it, and until the
    run had stopped with its partial history written."""
    watch = Watch()
    killed: list[float] = []

    def kill() -> None:
        run = watch.wait_for_writes()
        pid = victim(run)
        killed.append(time.monotonic())
        os.kill(pid, signal.SIGKILL)

    threading.Thread(target=kill, daemon=True).start()
    with tempfile.TemporaryDirectory() as folder:
        try:
            run_randomized(endpoint, Settings(workers=3, seconds=30), Path(folder) / "h.json")
        except LabStopped:
            stopped = time.monotonic()
        else:
            raise AssertionError("the run did not stop")
    assert watch.seen is not None
    return watch.seen - killed[0], stopped - killed[0]


def given_etcd() -> tuple[subprocess.Popen[str], Endpoint, int]:
    """An etcd started by another process (so the lab sees it only by its answers)."""
    script = (
        "import sys, time\n"
        "from lab.etcd import EtcdServer\n"
        "with EtcdServer() as server:\n"
        "    print(server.endpoint.url, server.pid, flush=True)\n"
        "    server.wait()\n"
    )
    keeper = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert keeper.stdout is not None
    url, pid = keeper.stdout.readline().split()
    return keeper, parse_endpoint(url), int(pid)


def show(name: str, times: list[tuple[float, float]], target: float) -> None:
    """One line of figures."""
    seen = [t[0] for t in times]
    done = [t[1] for t in times]
    print(
        f"  {name:<28} seen after {1000 * statistics.median(seen):6.1f} ms median, "
        f"{1000 * max(seen):6.1f} ms max (target {1000 * target:g} ms); stopped and written "
        f"after {statistics.median(done):.2f} s"
    )


def history_size(endpoint: Endpoint, settings: Settings) -> str:
    """The size of a randomized run's history, its events and writes, in words."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "h.json"
        try:
            report = run_randomized(endpoint, settings, path)
        except LabStopped as stop:
            return f"{path.stat().st_size:>10,} bytes, stopped early: {stop.reason}"
        size = path.stat().st_size
        return (
            f"{size:>10,} bytes, {len(report.history.events):,} events, "
            f"{report.counts.operations:,} writes ({size / REPLAY_LIMIT_BYTES:.2f} of the limit)"
        )


def main() -> None:
    """Print the figures."""
    print(f"A process dying mid-run (SIGKILL), {REPEATS} runs each:")
    with EtcdServer() as server:
        assert server.endpoint is not None
        endpoint = server.endpoint
        show(
            "a worker",
            [detection(endpoint, lambda r: r.workers[2].pid) for _ in range(REPEATS)],
            LOCAL_TARGET_S,
        )
        show(
            "the storage process",
            [
                detection(endpoint, lambda r: r.storage.pid if r.storage else 0)
                for _ in range(REPEATS)
            ],
            LOCAL_TARGET_S,
        )
    local = []
    for _ in range(REPEATS):
        with EtcdServer() as server:
            assert server.endpoint is not None and server.pid is not None
            pid = server.pid
            local.append(detection(server.endpoint, lambda _r, pid=pid: pid))
    show("the etcd the lab started", local, LOCAL_TARGET_S)
    given = []
    for _ in range(REPEATS):
        keeper, endpoint, pid = given_etcd()
        try:
            given.append(detection(endpoint, lambda _r, pid=pid: pid))
        finally:
            keeper.wait(timeout=10)
    show("an etcd given by address", given, GIVEN_TARGET_S)
    print(
        f"\nHistory of a {SIZE_SECONDS:g}-second randomized run "
        f"(replay limit {REPLAY_LIMIT_BYTES:,} bytes):"
    )
    with EtcdServer() as server:
        assert server.endpoint is not None
        for name, settings in (("default settings", DEFAULT), ("busiest", BUSIEST)):
            print(f"  {name:<18} {history_size(server.endpoint, settings)}")


if __name__ == "__main__":
    main()
