"""What the tests that start a real server share: a free loopback port, a health probe, the
server's command line and its processes' children."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

from fencing.hall import STREAMLIT_FLAGS

APP = Path(__file__).resolve().parents[1] / "webapp" / "app.py"
"""The app's entry script."""


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str) -> bool:
    """Whether the Streamlit server at `url` answers its health endpoint."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def app_flags(port: int) -> list[str]:
    """`run webapp/app.py` on loopback at `port`, with the settings every served process
    runs with: the arguments after the `streamlit` command every real-server test starts."""
    return [
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        *STREAMLIT_FLAGS,
    ]


def children_of(pid: int) -> list[int]:
    """The living processes whose parent is `pid` (a zombie has ended), as the kernel lists them."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X") and int(fields[1]) == pid:
            found.append(int(entry.name))
    return found
