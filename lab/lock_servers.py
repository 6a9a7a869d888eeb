"""The lock services other than etcd, started by the lab: ZooKeeper and Redis on loopback.

Each server is a child of the lab (`lab.processes`) on a free loopback port with a
temporary data folder (`lab.tempdirs`), waited for until it answers (ZooKeeper's `ruok`
answered `imok`, Redis's PING answered PONG), and stopped with its folder removed at the
end. A missing program or client library is a `LabInputError` of one line naming it.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lab.etcd import free_port
from lab.processes import Child, start_child
from lab.settings import LabError, LabInputError
from lab.tempdirs import make_directory, sweep_abandoned

START_SECONDS: Final = 30.0
"""How long a service may take to answer after it was started (a JVM on a busy machine)."""
ZOOKEEPER_JARS: Final = (Path("/usr/share/java/zookeeper.jar"),)
"""Debian's ZooKeeper jar (its manifest names the jars it needs)."""
QUIET_LOGGING: Final = (Path("/usr/share/java/slf4j-nop.jar"),)
"""A logger that writes nothing, if installed (else ZooKeeper warns once on standard error)."""
TICK_MS: Final = 100
"""ZooKeeper's tick: sessions are checked for expiry every tick."""
MAX_SESSION_MS: Final = 20_000
REDIS_SERVER: Final = "redis-server"


@dataclass(frozen=True)
class ServiceAddress:
    """Where a lock service answers: its name, host and port, and the child that runs it."""

    service: str
    host: str
    port: int

    @property
    def url(self) -> str:
        """What a worker is given: `host:port` for ZooKeeper, `redis://host:port` for Redis."""
        if self.service == "redis":
            return f"redis://{self.host}:{self.port}"
        return f"{self.host}:{self.port}"


def missing_requirement(service: str) -> str:
    """What this machine lacks to run a service ('' when nothing is missing)."""
    if service == "zookeeper":
        if importlib.util.find_spec("kazoo") is None:
            return "the ZooKeeper lock needs the kazoo client library (pip install kazoo)"
        if shutil.which("java") is None:
            return "the ZooKeeper lock needs a Java runtime (the java program)"
        if not all(jar.is_file() for jar in ZOOKEEPER_JARS):
            return "the ZooKeeper lock needs ZooKeeper's jar (the Debian package zookeeper)"
    if service == "redis":
        if importlib.util.find_spec("redis") is None:
            return "the Redis lock needs the redis client library (pip install redis)"
        if shutil.which(REDIS_SERVER) is None:
            return "the Redis lock needs the redis-server program (the Debian package redis-server)"
    return ""


def _ask(port: int, request: bytes, timeout: float = 1.0) -> bytes:
    """Send a few bytes to a loopback port and return its first answer (b'' on failure)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(request)
            return sock.recv(64)
    except OSError:
        return b""


class ServiceServer:
    """One lock service started by the lab: a child on a free port, a temporary folder."""

    service = ""
    ready_request = b""
    ready_answer = b""

    def __init__(self) -> None:
        self.address: ServiceAddress | None = None
        self.start_seconds = 0.0
        self.child: Child | None = None
        self.directory: Path | None = None

    def argv(self, port: int, directory: Path) -> list[str]:
        """The command line of the service (written files go into `directory`)."""
        raise NotImplementedError

    def start(self) -> ServiceAddress:
        """Start the service and wait until it answers; one-line errors if it cannot."""
        missing = missing_requirement(self.service)
        if missing:
            raise LabInputError(missing)
        started = time.monotonic()
        sweep_abandoned()
        self.directory = make_directory(self.service)
        port = free_port()
        try:
            with open(self.directory / "service.log", "w") as log:
                self.child = start_child(
                    self.service, self.argv(port, self.directory), stdout=log, stderr=log
                )
            self._wait(port)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started
        self.address = ServiceAddress(self.service, "127.0.0.1", port)
        return self.address

    def _wait(self, port: int) -> None:
        """Wait until the service answers its readiness question."""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.child is not None and not self.child.alive():
                raise LabError(f"{self.service} {self.child.ending()} while starting")
            if _ask(port, self.ready_request).startswith(self.ready_answer):
                return
            time.sleep(0.02)
        raise LabError(f"{self.service} did not answer within {START_SECONDS:g} s")

    def alive(self) -> bool:
        """Whether the service's process still runs."""
        return self.child is not None and self.child.alive()

    def restart(self) -> None:
        """Kill the service (SIGKILL) and start it again on the same port and folder."""
        assert self.address is not None and self.directory is not None
        if self.child is not None:
            self.child.kill()
        with open(self.directory / "service.log", "a") as log:
            self.child = start_child(
                self.service, self.argv(self.address.port, self.directory), stdout=log, stderr=log
            )
        self._wait(self.address.port)

    def stop(self) -> None:
        """Stop the service and remove its folder (safe to call twice)."""
        if self.child is not None:
            self.child.stop()
            self.child = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
        self.address = None

    def __enter__(self) -> ServiceServer:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ZooKeeperServer(ServiceServer):
    """A standalone ZooKeeper: 127.0.0.1 only, admin server off, short ticks."""

    service = "zookeeper"
    ready_request = b"ruok"
    ready_answer = b"imok"

    def argv(self, port: int, directory: Path) -> list[str]:
        """java … ZooKeeperServerMain zoo.cfg, with a zoo.cfg written into the folder."""
        config = directory / "zoo.cfg"
        (directory / "data").mkdir(exist_ok=True)
        config.write_text(
            "\n".join(
                (
                    f"tickTime={TICK_MS}",
                    f"dataDir={directory / 'data'}",
                    f"clientPort={port}",
                    "clientPortAddress=127.0.0.1",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=ruok,srvr",
                    f"maxSessionTimeout={MAX_SESSION_MS}",
                    "",
                )
            )
        )
        jars = [*ZOOKEEPER_JARS, *(jar for jar in QUIET_LOGGING if jar.is_file())]
        java = shutil.which("java") or "java"
        return [
            java,
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-Dzookeeper.admin.enableServer=false",
            "-cp",
            ":".join(str(jar) for jar in jars),
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            str(config),
        ]


class RedisServer(ServiceServer):
    """A redis-server that keeps nothing on disk: 127.0.0.1 only, no snapshots."""

    service = "redis"
    ready_request = b"PING\r\n"
    ready_answer = b"+PONG"

    def argv(self, port: int, directory: Path) -> list[str]:
        """redis-server with loopback, the port, no saving, the folder as its directory."""
        binary = shutil.which(REDIS_SERVER) or REDIS_SERVER
        return [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
            "--protected-mode",
            "yes",
        ]


def server_for(service: str) -> ServiceServer | None:
    """A server for the service (None for the etcd services: the lab's etcd is theirs)."""
    if service == "zookeeper":
        return ZooKeeperServer()
    if service == "redis":
        return RedisServer()
    return None


class SharedServices:
    """One server per lock service for a long-running process (the web app), each started
    on first use from a thread that lives as long as it does, and stopped at exit."""

    def __init__(self) -> None:
        self.servers: dict[str, ServiceServer] = {}
        self.lock = threading.Lock()

    def server(self, service: str) -> ServiceServer | None:
        """The running server of a service (None for the etcd services); LabInputError when
        the machine lacks it, LabError when it does not start."""
        missing = missing_requirement(service)
        if missing:
            raise LabInputError(missing)
        with self.lock:
            running = self.servers.get(service)
            if running is not None and running.alive():
                return running
            if running is not None:
                running.stop()
            server = server_for(service)
            if server is None:
                return None
            self._keep(server)
            self.servers[service] = server
            return server

    def _keep(self, server: ServiceServer) -> None:
        """Start the server from a thread of its own (the kernel stops a child whose
        starting thread ends) and wait until it answers."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def keep() -> None:
            try:
                server.start()
            except (LabError, LabInputError) as error:
                failure.append(error)
                ready.set()
                return
            ready.set()
            child = server.child
            if child is not None:
                child.process.wait()

        threading.Thread(target=keep, name=f"fencing-lab-{server.service}", daemon=True).start()
        if not ready.wait(START_SECONDS + 5):
            raise LabError(f"the shared {server.service} did not start in time")
        if failure:
            raise failure[0]
        atexit.register(server.stop)


SHARED_SERVICES: Final = SharedServices()
