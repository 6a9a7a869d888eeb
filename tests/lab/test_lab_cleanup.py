"""No orphans and no leftovers: processes stopped and files removed on failure, on a time
limit, on Ctrl-C and even when the lab itself is killed; a clear error when etcd cannot start.

The autouse fixture of conftest.py checks after every test here that no child process is
left running and no run directory of this process remains."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lab import etcd as etcd_module
from lab.etcd import Endpoint, EtcdServer
from lab.lock import LOCK_KEY
from lab.processes import ENDED, ROOT, process_state
from lab.runner import Driver, LabRun, LabTimeout
from lab.settings import LabError, Settings
from lab.tempdirs import sweep_abandoned

MARK = "FENCING_LAB_TEST_MARK"


def marked_processes(mark: str) -> list[int]:
    """Processes whose environment carries `MARK=mark` (the lab's children inherit it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def owned_directories(pid: int) -> list[Path]:
    """The lab's temporary directories made by process `pid`."""
    found = []
    for path in Path(tempfile.gettempdir()).glob("fencing-lab-*"):
        owner = path / "owner.pid"
        if owner.is_file() and owner.read_text().strip() == str(pid):
            found.append(path)
    return found


def wait_state(pid: int, wanted: str, seconds: float = 5.0) -> bool:
    """Wait until the process is in state `wanted`."""
    deadline = time.monotonic() + seconds
    while process_state(pid) != wanted and time.monotonic() < deadline:
        time.sleep(0.01)
    return process_state(pid) == wanted


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    return process_state(pid) not in ENDED


def test_a_failing_scenario_resumes_stops_and_removes_everything(etcd: Endpoint) -> None:
    """A scenario that fails while a worker is paused: the worker is resumed and stopped."""
    run = LabRun(etcd, Settings(receiver="fenced"), "failing", 30)
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="the scenario broke"), run:
        run.start_workers()
        driver = Driver(run, 3)
        driver.acquire(1)
        driver.pause(1)
        pids = run.children.pids()
        assert wait_state(run.workers[1].pid, "T")  # stopped by SIGSTOP
        raise RuntimeError("the scenario broke")
    assert pids and not any(alive(pid) for pid in pids)
    assert not run.directory.exists()
    assert etcd.client().get(run.prefix + LOCK_KEY) == []


def test_a_run_past_its_time_limit_is_stopped(etcd: Endpoint) -> None:
    run = LabRun(etcd, Settings(), "too-slow", 3)
    with pytest.raises(LabTimeout, match=r"time limit|gave up waiting"), run:
        run.start_workers()
        driver = Driver(run, 2)
        driver.hold(1)
        driver.wait_held(1)  # W1 never sends: the wait runs into the run's 3 s limit
    assert not run.directory.exists()


def start_cli(mark: str, *args: str) -> subprocess.Popen[str]:
    """`fencing lab ...` in a child process whose environment carries the mark."""
    env = {**os.environ, MARK: mark, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "fencing.cli", "lab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for_pause(process: subprocess.Popen[str], mark: str) -> None:
    """Wait until the lab runs its workers (W1 is paused early in paused-worker)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(process_state(pid) == "T" for pid in marked_processes(mark)):
            return
        assert process.poll() is None
        time.sleep(0.05)
    pytest.fail("the lab never paused a worker")


@pytest.mark.parametrize(("sent", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_stops_every_process_and_says_so(
    sent: signal.Signals, status: int, tmp_path: Path
) -> None:
    """SIGINT exits with 130 and SIGTERM with 143 (128 plus the signal's number); both stop
    every process, remove the run's files and keep the partial history, marked partial."""
    mark = f"interrupt-{sent.name}"
    path = tmp_path / "h.json"
    process = start_cli(mark, "run", "paused-worker", "--history", str(path))
    wait_for_pause(process, mark)
    process.send_signal(sent)
    out, err = process.communicate(timeout=30)
    assert process.returncode == status
    assert f"interrupted by {sent.name}" in err and err.count("\n") == 1
    assert "every process the lab started was stopped" in err and str(path) in err
    assert out == ""  # no report that looks like a finished run
    assert marked_processes(mark) == []
    assert owned_directories(process.pid) == []
    partial = json.loads(path.read_text())
    assert partial["partial"].startswith(f"interrupted by {sent.name}")
    assert any(event["kind"] == "pause" for event in partial["events"])


def test_a_killed_lab_takes_its_children_along_and_its_files_are_swept(tmp_path: Path) -> None:
    """SIGKILL leaves no chance to clean up: the children die with it (parent-death signal)
    and the next lab removes the directories it left."""
    mark = "killed"
    process = start_cli(mark, "run", "paused-worker", "--history", str(tmp_path / "h.json"))
    wait_for_pause(process, mark)
    process.kill()
    process.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked_processes(mark) == []
    left = owned_directories(process.pid)
    assert left, "a killed lab cannot remove its directories itself"
    sweep_abandoned()
    assert not any(p.exists() for p in left)


def test_a_missing_etcd_binary_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(etcd_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(LabError, match=r"etcd server binary is missing.*--etcd http://HOST:PORT"):
        EtcdServer().start()


def test_an_etcd_that_exits_at_once_is_reported_with_advice(tmp_path: Path) -> None:
    broken = tmp_path / "etcd"
    broken.write_text("#!/bin/sh\necho 'listen tcp: address already in use' >&2\nexit 1\n")
    broken.chmod(0o755)
    before = owned_directories(os.getpid())
    with pytest.raises(LabError) as error:
        EtcdServer(binary=broken).start()
    message = str(error.value)
    assert "etcd could not start" in message and "address already in use" in message
    assert "--etcd http://HOST:PORT" in message
    assert owned_directories(os.getpid()) == before
