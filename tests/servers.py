"""What the tests that start a real server share: a free loopback port and a health probe."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

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
    """`run webapp/app.py` on loopback at `port`, headless, without usage stats or watcher:
    the arguments after the `streamlit` command every real-server test starts."""
    return [
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
