"""The reverse proxy in front of a class server's processes: HAProxy, from Debian.

One address for the class, several Streamlit processes behind it. What the configuration
asks of HAProxy, and why:

- **sticky sessions**: the first answer to a browser sets a cookie naming its process, and
  every later request of that browser (the page's websocket, an upload, a download) goes to
  the same process, which holds its session;
- **websockets**: a page is one long-lived websocket; once upgraded it is a tunnel that may
  stay quiet for a long time (`timeout tunnel`);
- **health checks**: each process's `/_stcore/health` is asked every second; two failures
  mark it down, and its open websockets are cut so its students reconnect elsewhere. A
  process that refuses the connection (it died) fails at once; one that accepts it has
  `CHECK_TIMEOUT_SECONDS` to answer, because a process busy with a lecture hall's pages
  answers late, and marking it down would cut every one of its students (HAProxy's default,
  the check interval, made a loaded class server cut them all);
- **failover**: a student whose process is down (killed, or restarting) is sent to another
  (`option redispatch`), where the page opens again from its link: in a class, the link holds
  the class and the student, and the answers are in the shared database. A request whose
  process refused it, closed without an answer or did not answer in time is tried again on
  another (`retry-on`), so the one that finds a process just killed does not fail;
- **new students** go to the process with the fewest open connections (`leastconn`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import shutil
import socket as sockets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

PROGRAM: Final = "haproxy"
DEBIAN_PACKAGE: Final = "haproxy"
COOKIE: Final = "fencing_lab_process"
"""The cookie that keeps a browser on its process."""
HEALTH_PATH: Final = "/_stcore/health"
CHECK_SECONDS: Final = 1
"""How often HAProxy asks each process whether it is healthy."""
FALL: Final = 2
"""Failed checks in a row that mark a process down."""
RISE: Final = 2
"""Passed checks in a row that mark it up again."""
CHECK_TIMEOUT_SECONDS: Final = 10
"""How long a process that accepted a health check's connection has to answer it."""
TUNNEL_TIMEOUT: Final = "2h"
"""How long an open websocket may stay quiet (a lecture's length)."""


@dataclass(frozen=True)
class Backend:
    """One server process behind the proxy: its name (in the cookie) and loopback port."""

    name: str
    port: int


def missing() -> str:
    """What the machine lacks to run the proxy, in one sentence ('' if nothing)."""
    if shutil.which(PROGRAM) is None and not Path(f"/usr/sbin/{PROGRAM}").exists():
        return (
            "HAProxy is not installed: several server processes need it in front of them "
            f"(Debian's {DEBIAN_PACKAGE} package; `make system-packages` installs it)"
        )
    return ""


def program() -> str:
    """The haproxy program's path."""
    return shutil.which(PROGRAM) or f"/usr/sbin/{PROGRAM}"


def bind_address(address: str, port: int) -> str:
    """HAProxy's form of a listening address: the host, a colon, the port (an IPv6 address
    is written without brackets: HAProxy reads the port after the last colon)."""
    return f"{address.strip('[]')}:{port}"


def configuration(address: str, port: int, backends: Sequence[Backend], socket: Path) -> str:
    """The whole HAProxy configuration of a class server (see the module's text)."""
    servers = "\n".join(
        f"    server {b.name} 127.0.0.1:{b.port} check cookie {b.name}" for b in backends
    )
    return f"""global
    maxconn 4096
    log stderr format short local0 notice
    stats socket {socket} mode 600 level admin

defaults
    mode http
    log global
    option dontlognull
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel {TUNNEL_TIMEOUT}
    timeout check {CHECK_TIMEOUT_SECONDS}s
    timeout http-request 15s
    timeout queue 30s
    retries 3
    retry-on conn-failure empty-response response-timeout
    option redispatch 1

frontend class
    bind {bind_address(address, port)}
    default_backend processes

backend processes
    balance leastconn
    cookie {COOKIE} insert indirect nocache httponly attr "SameSite=Lax"
    option httpchk GET {HEALTH_PATH}
    http-check expect status 200
    default-server inter {CHECK_SECONDS}s fall {FALL} rise {RISE} on-marked-down shutdown-sessions
{servers}
"""


def server_states(socket: Path, timeout: float = 2.0) -> dict[str, bool]:
    """Whether the proxy sends students to each process now (its name: True when up), asked
    on HAProxy's own socket; empty when it does not answer."""
    text = b""
    with contextlib.suppress(OSError), sockets.socket(sockets.AF_UNIX) as connection:
        connection.settimeout(timeout)
        connection.connect(str(socket))
        connection.sendall(b"show stat\n")
        while chunk := connection.recv(65536):
            text += chunk
    rows = csv.DictReader(io.StringIO(text.decode(errors="replace").lstrip("# ")))
    return {
        row["svname"]: row["status"].startswith("UP")
        for row in rows
        if row.get("pxname") == "processes" and row.get("svname") not in ("FRONTEND", "BACKEND")
    }
