"""What the tests that start a real server share: a free loopback port and a health probe."""

from __future__ import annotations

import socket
import urllib.request


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
