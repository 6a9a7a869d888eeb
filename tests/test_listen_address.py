"""The server listens on this machine only, from whatever folder it is started; the class
target (`make serve-class`) listens on the network. Real servers, each stopped by its id."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers import children_of, free_port, healthy

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "webapp" / "app.py"
STARTUP_SECONDS = 60


def network_address() -> str | None:
    """This machine's address on its network (not loopback), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # a documentation address: nothing is sent
        except OSError:
            return None
        address = str(sock.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def answers(address: str, port: int) -> bool:
    """Whether something accepts a TCP connection at this address and port."""
    try:
        with socket.create_connection((address, port), timeout=2):
            return True
    except OSError:
        return False


def bound_addresses(port: int) -> list[str]:
    """The local addresses listening on this port, as `ss -ltn` reports them."""
    listed = subprocess.run(
        ["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout
    return [line.split()[3].rsplit(":", 1)[0] for line in listed.splitlines() if line.strip()]


@contextmanager
def server(command: list[str], cwd: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server command in its own process group until it is healthy; stop that group.
    Yields the server's process."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not healthy(f"http://127.0.0.1:{port}"):
            assert process.poll() is None, "the server stopped"
            assert time.monotonic() < deadline, "the server did not become healthy"
            time.sleep(0.3)
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def streamlit_run(port: int, *flags: str) -> list[str]:
    """`streamlit run` of the app by its full path, as anyone might type it."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        *flags,
    ]


def test_started_from_another_folder_it_listens_on_this_machine_only(tmp_path: Path) -> None:
    """No config file in the current folder or the home: still loopback only."""
    port = free_port()
    with server(streamlit_run(port), cwd=tmp_path, port=port):
        if shutil.which("ss"):
            assert bound_addresses(port) == ["127.0.0.1"]
        address = network_address()
        if address is not None:
            assert not answers(address, port), f"reachable at {address}:{port}"
        assert answers("127.0.0.1", port)


def test_the_class_target_listens_on_the_network() -> None:
    """`make serve-class` (from the repository, as the README says) serves other machines."""
    address = network_address()
    if address is None or shutil.which("make") is None:
        pytest.skip("this machine has no network address (or no make) to check it on")
    port = free_port()
    with server(["make", "--no-print-directory", "serve-class", f"PORT={port}"], ROOT, port):
        assert answers(address, port)
        if shutil.which("ss"):
            assert bound_addresses(port) == ["0.0.0.0"]


def test_the_run_target_is_one_process_without_a_proxy() -> None:
    """`make run` serves from the one process it starts (no proxy, no other server)."""
    if shutil.which("make") is None:
        pytest.skip("this machine has no make to read the run target with")
    port = free_port()
    planned = subprocess.run(
        ["make", "-n", "--no-print-directory", "run", f"PORT={port}", "STAMP="],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    words = planned[-1].split()
    assert words[0].endswith("/python") and "--workers" not in words, planned[-1]
    with server([sys.executable, *words[1:]], ROOT, port) as process:
        assert children_of(process.pid) == []
        if shutil.which("ss"):
            listed = subprocess.run(
                ["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True, check=True
            ).stdout
            assert f"pid={process.pid}," in listed, listed
