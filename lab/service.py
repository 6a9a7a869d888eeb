"""The lab inside a long-running server: one shared etcd, and a limit on concurrent runs.

The web app serves many visitors from one process. `SHARED_ETCD` starts one etcd on first
use (or uses `FENCING_LAB_ETCD`) and stops it when the process exits; each run still has
its own key prefix, database file and processes. `SLOTS` lets at most `MAX_RUNS` runs go
at once; a run past that waits in a short queue, and past the queue it is told the lab is
busy, so a class of thirty cannot exhaust a small machine.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from lab.etcd import Endpoint, EtcdServer, check_reachable, endpoint_from
from lab.settings import LabError

MAX_RUNS: Final = max(1, int(os.environ.get("FENCING_LAB_MAX_RUNS", "2") or 2))
"""Lab runs that may go at once in one server process."""
MAX_WAITING: Final = 6
"""Runs that may wait for a free slot; one more is told the lab is busy."""
QUEUE_SECONDS: Final = 60.0
"""How long a waiting run waits for a slot before it is told the lab is busy."""
START_SECONDS: Final = 30.0


class SharedEtcd:
    """One etcd for the whole process, started on first use and stopped at exit."""

    def __init__(self) -> None:
        self.server: EtcdServer | None = None
        self.lock = threading.Lock()

    def endpoint(self) -> Endpoint:
        """The etcd every run of this process uses (raises `LabError` if it cannot start)."""
        given = endpoint_from(None)
        if given is not None:
            check_reachable(given)
            return given
        with self.lock:
            if self.server is not None and self.server.endpoint is not None and self.server.pid:
                return self.server.endpoint
            if self.server is not None:
                self.server.stop()  # it died: remove its data dir before starting another
            self.server = self._start()
            assert self.server.endpoint is not None
            return self.server.endpoint

    def _start(self) -> EtcdServer:
        """Start etcd from a thread that lives as long as etcd does.

        The kernel kills a child when the thread that started it ends (the lab's children
        ask for that), and a web page's script thread ends after every run, so the shared
        etcd is started and waited for by a thread of its own.
        """
        server = EtcdServer()
        ready = threading.Event()
        failure: list[LabError] = []

        def keep() -> None:
            try:
                server.start()
            except LabError as error:
                failure.append(error)
                ready.set()
                return
            ready.set()
            server.wait()

        threading.Thread(target=keep, name="fencing-lab-etcd", daemon=True).start()
        if not ready.wait(START_SECONDS):
            raise LabError(f"the shared etcd did not start within {START_SECONDS:g} s")
        if failure:
            raise failure[0]
        atexit.register(server.stop)
        return server

    def stop(self) -> None:
        """Stop the shared etcd (the next use starts a new one)."""
        with self.lock:
            if self.server is not None:
                self.server.stop()
                self.server = None


@dataclass
class Slots:
    """At most `limit` runs at once; a few more may wait; the rest are told it is busy."""

    limit: int
    waiting_limit: int = MAX_WAITING

    def __post_init__(self) -> None:
        self.free = threading.BoundedSemaphore(self.limit)
        self.lock = threading.Lock()
        self.running = 0
        self.waiting = 0

    @contextmanager
    def slot(
        self, wait_seconds: float, on_queued: Callable[[int, int], None] | None = None
    ) -> Iterator[bool]:
        """Yield True with a slot held, or False when the lab is busy (queue full or timeout).

        `on_queued(running, waiting)` is called once if the run has to wait.
        """
        got = self.free.acquire(blocking=False)
        if not got:
            with self.lock:
                full = self.waiting >= self.waiting_limit
                if not full:
                    self.waiting += 1
            if full:
                yield False
                return
            if on_queued is not None:
                on_queued(self.running, self.waiting)
            try:
                got = self.free.acquire(timeout=wait_seconds)
            finally:
                with self.lock:
                    self.waiting -= 1
            if not got:
                yield False
                return
        with self.lock:
            self.running += 1
        try:
            yield True
        finally:
            with self.lock:
                self.running -= 1
            self.free.release()


SHARED_ETCD: Final = SharedEtcd()
SLOTS: Final = Slots(MAX_RUNS)
