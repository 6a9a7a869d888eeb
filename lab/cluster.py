"""A three-member etcd cluster started by the lab on loopback, for member faults.

Each member has its own client and peer ports and data directory; the cluster is formed
with a static initial cluster, waited on until every member answers and one leads, and
then leadership is moved to the first member. The controller (its watch, its probe, the
etcd-txn store) talks to the first member, which the nemesis never touches; the workers
are spread over all members, so killing or pausing member 2 or 3 cuts off the workers that
use it. A killed member is started again on its data directory, and rejoins.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import requests

from lab import etcd as single
from lab.etcd import Endpoint, etcd_binary, free_port
from lab.processes import Child, start_child
from lab.settings import LabError
from lab.tempdirs import make_directory, sweep_abandoned

HEARTBEAT_MS: Final = 25
ELECTION_MS: Final = 250
"""Raft timers of a cluster member: longer than a single member's, so a busy machine does
not call elections, and short enough for a 1-second lease (etcd's minimum TTL is 1.5
election timeouts)."""
START_SECONDS: Final = 30.0
LEADER_SECONDS: Final = 10.0
REQUEST_SECONDS: Final = 2.0


@dataclass
class Member:
    """One etcd member: its name, ports, command line and process."""

    name: str
    client: Endpoint
    peer_url: str
    argv: list[str]
    log: Path
    child: Child | None = None
    down: bool = False
    """Killed by the nemesis and not started again yet."""


def _post(endpoint: Endpoint, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """One request to a member's JSON gateway."""
    answer = requests.post(f"{endpoint.url}/v3/{path}", json=body, timeout=REQUEST_SECONDS)
    answer.raise_for_status()
    data = answer.json()
    return data if isinstance(data, dict) else {}


class EtcdCluster:
    """A cluster of etcd members on loopback, started and stopped by the lab."""

    def __init__(self, size: int = 3) -> None:
        self.size = size
        self.members: list[Member] = []
        self.directory: Path | None = None
        self.start_seconds = 0.0
        self.lock = threading.Lock()
        self.ids: dict[int, str] = {}
        """Each member's ID as its peers' metrics write it (hexadecimal), by number."""

    @property
    def endpoint(self) -> Endpoint:
        """The first member's client endpoint (the controller's)."""
        return self.members[0].client

    def start(self) -> Endpoint:
        """Start every member, wait until all answer and the first leads."""
        started = time.monotonic()
        binary = etcd_binary()
        sweep_abandoned()
        self.directory = make_directory("etcd")
        try:
            self._start_members(binary)
            self.wait_healthy(START_SECONDS)
            self._lead_from_first()
            self.ids = {
                number: f"{int(self.status(member)['header']['member_id']):x}"
                for number, member in enumerate(self.members, start=1)
            }
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started
        with single._STARTED_LOCK:
            first = self.members[0].child
            assert first is not None
            single._STARTED[self.endpoint] = first
        with _CLUSTERS_LOCK:
            _CLUSTERS[self.endpoint] = self
        return self.endpoint

    def _start_members(self, binary: Path) -> None:
        """Pick ports, write each member's command line, start them all."""
        assert self.directory is not None
        ports = [(free_port(), free_port()) for _ in range(self.size)]
        names = [f"m{i}" for i in range(1, self.size + 1)]
        cluster = ",".join(
            f"{name}=http://127.0.0.1:{peer}" for name, (_, peer) in zip(names, ports, strict=True)
        )
        for name, (client, peer) in zip(names, ports, strict=True):
            client_url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
            argv = [
                str(binary),
                f"--name={name}",
                f"--data-dir={self.directory / name}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster={cluster}",
                "--initial-cluster-state=new",
                "--initial-cluster-token=fencing-lab",
                f"--heartbeat-interval={HEARTBEAT_MS}",
                f"--election-timeout={ELECTION_MS}",
                "--log-level=error",
            ]
            member = Member(
                name, Endpoint("127.0.0.1", client), peer_url, argv, self.directory / f"{name}.log"
            )
            self.members.append(member)
            self._launch(member)

    def _launch(self, member: Member) -> None:
        """Start (or start again) one member's process."""
        with open(member.log, "a") as log:
            member.child = start_child(f"etcd {member.name}", member.argv, stdout=log, stderr=log)
        member.down = False

    def wait_healthy(self, seconds: float) -> None:
        """Wait until every member answers a status request and they agree on a leader."""
        deadline = time.monotonic() + seconds
        last = ""
        while time.monotonic() < deadline:
            try:
                leaders = {self.status(m).get("leader") for m in self.members}
                if len(leaders) == 1 and None not in leaders:
                    return
                last = "the members do not agree on a leader yet"
            except (requests.RequestException, ValueError) as error:
                last = type(error).__name__
            for member in self.members:
                if member.child is not None and not member.child.alive():
                    raise LabError(f"etcd member {member.name} exited while the cluster started")
            time.sleep(0.05)
        raise LabError(f"the etcd cluster was not healthy within {seconds:g} s ({last})")

    def status(self, member: Member) -> dict[str, Any]:
        """A member's status: its own ID (`header.member_id`) and its leader's."""
        return _post(member.client, "maintenance/status", {})

    def _lead_from_first(self) -> None:
        """Move the leadership to the first member (the one the nemesis never touches)."""
        first = self.members[0]
        first_id = self.status(first)["header"]["member_id"]
        deadline = time.monotonic() + LEADER_SECONDS
        while time.monotonic() < deadline:
            leader = self.status(first).get("leader")
            if leader == first_id:
                return
            for member in self.members:
                if self.status(member)["header"]["member_id"] == leader:
                    with contextlib.suppress(requests.RequestException):
                        _post(
                            member.client, "maintenance/transfer-leadership", {"targetID": first_id}
                        )
            time.sleep(0.1)
        raise LabError("the etcd cluster did not move its leadership to its first member")

    def leader(self) -> int:
        """The 1-based number of the member that leads now (per the first member)."""
        leader = self.status(self.members[0]).get("leader")
        for number, member in enumerate(self.members, start=1):
            if not member.down and self.status(member)["header"]["member_id"] == leader:
                return number
        return 0

    def peer_active(self, observer: int, number: int) -> bool | None:
        """Whether member `observer` sees member `number` as an active peer, from its own
        metrics (`etcd_network_active_peers`); None if it cannot be asked."""
        remote = self.ids.get(number)
        if remote is None:
            return None
        try:
            text = requests.get(
                f"{self.members[observer - 1].client.url}/metrics", timeout=REQUEST_SECONDS
            ).text
        except requests.RequestException:
            return None
        for line in text.splitlines():
            if line.startswith("etcd_network_active_peers{") and f'Remote="{remote}"' in line:
                return line.rsplit(maxsplit=1)[-1] != "0"
        return None

    def kill(self, number: int) -> None:
        """SIGKILL member `number` (it stays down until `restart`)."""
        member = self.members[number - 1]
        if member.child is not None and not member.down:
            member.child.kill()
            member.down = True

    def restart(self, number: int) -> None:
        """Start a killed member again on its data directory."""
        member = self.members[number - 1]
        if member.down:
            self._launch(member)

    def pause(self, number: int) -> bool:
        """SIGSTOP member `number`; False if it is down or already paused."""
        child = self.members[number - 1].child
        return child is not None and not self.members[number - 1].down and child.pause()

    def resume(self, number: int) -> bool:
        """SIGCONT a paused member."""
        child = self.members[number - 1].child
        return child is not None and child.resume()

    def pid(self, number: int) -> int | None:
        """Member `number`'s process id while it runs."""
        child = self.members[number - 1].child
        return child.pid if child is not None and child.alive() else None

    def heal(self) -> None:
        """Resume every paused member, start every killed one, wait until all are healthy."""
        for number in range(1, self.size + 1):
            self.resume(number)
            self.restart(number)
        self.wait_healthy(START_SECONDS)

    def stop(self) -> None:
        """Stop every member and remove the data directories."""
        with _CLUSTERS_LOCK:
            for endpoint in [e for e, c in _CLUSTERS.items() if c is self]:
                del _CLUSTERS[endpoint]
        with single._STARTED_LOCK:
            first = self.members[0].child if self.members else None
            for endpoint in [e for e, c in single._STARTED.items() if c is first]:
                del single._STARTED[endpoint]
        for member in self.members:
            if member.child is not None:
                member.child.stop()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self) -> EtcdCluster:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


_CLUSTERS: dict[Endpoint, EtcdCluster] = {}
"""The clusters this process started, by their first member's endpoint."""
_CLUSTERS_LOCK: Final = threading.Lock()


def cluster_of(endpoint: Endpoint) -> EtcdCluster | None:
    """The cluster the lab started whose first member answers at `endpoint`, if any."""
    with _CLUSTERS_LOCK:
        return _CLUSTERS.get(endpoint)


@contextlib.contextmanager
def started_cluster(size: int = 3) -> Iterator[EtcdCluster]:
    """A cluster for the duration of a block."""
    with EtcdCluster(size) as cluster:
        yield cluster
