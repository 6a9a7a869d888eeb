"""The proxy's health checks tell a busy process from a dead one: real HAProxy with the class
server's configuration, in front of a loopback process that answers its health check late
(as a process busy with a lecture hall's pages does) and a port where nothing listens (as a
killed process leaves). The busy one keeps its students; the dead one is marked down.
Nothing is timed but the waits."""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fencing import proxy
from tests.servers import free_port

pytestmark = pytest.mark.skipif(bool(proxy.missing()), reason=proxy.missing() or "HAProxy is there")

LATE_SECONDS = 3.0
"""How late the busy process answers its health check: three check intervals, well within
the time the proxy gives it."""
WATCH_SECONDS = 10.0
"""How long the proxy's verdicts are watched (several late checks in a row)."""


class LateHealth(BaseHTTPRequestHandler):
    """A process that answers its health check late and a page at once."""

    def do_GET(self) -> None:
        """The health check after `LATE_SECONDS`, anything else at once."""
        if self.path == proxy.HEALTH_PATH:
            time.sleep(LATE_SECONDS)
        body = b"ok"
        with contextlib.suppress(OSError):  # the proxy stopped before the answer: no one asks
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the proxy's verdicts, not this log."""


@pytest.fixture
def busy_process() -> Iterator[int]:
    """A loopback process whose health check is answered late; yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), LateHealth)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def test_a_busy_process_stays_up_and_a_dead_one_is_marked_down(
    tmp_path: Path, busy_process: int
) -> None:
    port = free_port()
    socket = tmp_path / "haproxy.sock"
    backends = [proxy.Backend("busy", busy_process), proxy.Backend("dead", free_port())]
    config = tmp_path / "haproxy.cfg"
    config.write_text(proxy.configuration("127.0.0.1", port, backends, socket))
    haproxy = subprocess.Popen(
        [proxy.program(), "-db", "-f", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        seen: list[dict[str, bool]] = []
        deadline = time.monotonic() + WATCH_SECONDS
        while time.monotonic() < deadline:
            assert haproxy.poll() is None, "the proxy stopped"
            if states := proxy.server_states(socket):
                seen.append(states)
            time.sleep(0.5)
        assert len(seen) >= WATCH_SECONDS, f"the proxy answered on its socket {len(seen)} times"
        assert all(states["busy"] for states in seen), "the busy process was marked down"
        assert not seen[-1]["dead"], "the dead process is still given students"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
            assert answer.status == 200 and answer.read() == b"ok"
    finally:
        haproxy.terminate()
        haproxy.wait(timeout=10)
