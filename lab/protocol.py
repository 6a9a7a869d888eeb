"""Requests from workers to the storage process: one JSON line each way over a Unix socket.

A worker opens a connection per request, so a storage process that was killed and started
again is simply reached by the next request.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any, Final

MAX_MESSAGE_BYTES: Final = 64_000


class StorageUnavailable(ConnectionError):
    """The storage process did not answer (down, restarting, or the request timed out): the
    request may have reached it, so its outcome is unknown."""


class StorageUnreached(StorageUnavailable):
    """The request never reached the storage process (nobody listened on its socket)."""


def read_line(sock: socket.socket) -> bytes:
    """Read one newline-terminated message (bounded in size)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk or size > MAX_MESSAGE_BYTES:
            break
    return b"".join(chunks).split(b"\n", 1)[0]


def send_json(sock: socket.socket, message: dict[str, Any]) -> None:
    """Send one JSON message and its newline."""
    sock.sendall(json.dumps(message).encode() + b"\n")


def request(path: Path, message: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Send one request to the storage process and return its answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            try:
                sock.connect(str(path))
            except OSError as error:
                raise StorageUnreached(f"the storage process was not there: {error}") from None
            send_json(sock, message)
            line = read_line(sock)
    except StorageUnreached:
        raise
    except OSError as error:
        raise StorageUnavailable(f"the storage process did not answer: {error}") from None
    if not line:
        raise StorageUnavailable("the storage process closed the connection")
    answer = json.loads(line)
    if not isinstance(answer, dict):
        raise StorageUnavailable("the storage process answered something that is not an object")
    return answer
