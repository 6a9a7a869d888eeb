"""The lab under faults keeps and reports its history honestly: a process it started that
dies (etcd, a worker, the storage process) is named with how it ended, the run stops with
exit status 1 and what it recorded is written, marked partial, and replayable; so is a run
stopped by Ctrl-C (exit 130). Bad --etcd addresses and --history paths are refused in one
line with status 2 before any process starts; two runs never write the same file.

The autouse fixture of conftest.py checks after every test that no child process is left
running and no run directory of this process remains."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fencing.cli import main
from lab import etcd as etcd_module
from lab import runner
from lab.etcd import Endpoint, EtcdServer, parse_endpoint
from lab.experiment import run_randomized
from lab.history import History, history_to_json, load_history
from lab.history_files import HistoryTarget, write_history
from lab.processes import ROOT
from lab.runner import REPLAY_LIMIT_BYTES, LabStopped, history_budget
from lab.settings import LabInputError, Settings
from tests.lab.histories import busy_history
from tests.lab.test_lab_cleanup import MARK, alive, marked_processes, owned_directories

RUN_SECONDS = "30"
"""A run long enough that it cannot have ended on its own when the fault is injected."""


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


def command_line(pid: int) -> list[str]:
    """A process's arguments ([] once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []


def process_of(mark: str, *words: str) -> int:
    """The marked process whose command line holds every one of `words`."""
    for pid in marked_processes(mark):
        line = command_line(pid)
        if all(any(word in part for part in line) for word in words):
            return pid
    return 0


def wait_for_writes(process: subprocess.Popen[str], writes: int = 3) -> None:
    """Wait until the lab's storage process has recorded `writes` write decisions."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for directory in owned_directories(process.pid):
            log = directory / "storage.jsonl"
            if log.is_file() and log.read_text().count('"op": "write"') >= writes:
                return
        time.sleep(0.05)
    pytest.fail("the lab never recorded a write")


def replays(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """`fencing replay PATH` succeeds; its output."""
    capsys.readouterr()
    assert main(["replay", str(path)]) == 0
    return capsys.readouterr().out


def partial_file(err: str, folder: Path) -> Path:
    """The one history file in `folder`, which the one-line message names."""
    files = sorted(folder.glob("lab-*.json"))
    assert len(files) == 1, files
    assert f"the partial history ({len(load_history(files[0]).events):,} events" in err
    assert err.rstrip("\n").endswith(str(files[0]))
    return files[0]


@pytest.fixture
def own_etcd() -> Iterator[EtcdServer]:
    """An etcd of this test alone (it is killed by the test)."""
    with EtcdServer() as server:
        yield server


# ----- a process the run started dies ------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "words", "said"),
    [
        ("worker", ("lab.worker", "--worker=2"), "worker W2 (pid {pid}) was killed by SIGKILL"),
        ("storage", ("lab.store_server",), "the storage process (pid {pid}) was killed by SIGKILL"),
    ],
)
def test_a_killed_worker_or_store_is_named_and_the_history_kept(
    who: str,
    words: tuple[str, ...],
    said: str,
    etcd: Endpoint,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mark = f"dies-{who}"
    process = start_cli(
        mark, "random", "--seconds", RUN_SECONDS, "--etcd", etcd.url, "--history", str(tmp_path)
    )
    wait_for_writes(process)
    pid = process_of(mark, *words)
    assert pid
    os.kill(pid, signal.SIGKILL)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.startswith(f"fencing: error: {said.format(pid=pid)}, seen ")
    assert err.count("\n") == 1 and "Traceback" not in err and out == ""
    assert "every process the lab started was stopped" in err
    path = partial_file(err, tmp_path)
    data = json.loads(path.read_text())
    assert data["partial"].startswith(said.format(pid=pid))
    assert data["seconds"] < float(RUN_SECONDS)  # stopped when the process died
    assert any(event["kind"] == "deliver" for event in data["events"])
    assert "writes decided" in replays(path, capsys)
    assert marked_processes(mark) == []
    assert owned_directories(process.pid) == []


def test_the_etcd_the_lab_started_killed_mid_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mark = "dies-etcd"
    process = start_cli(mark, "random", "--seconds", RUN_SECONDS, "--history", str(tmp_path))
    wait_for_writes(process)
    pid = process_of(mark, "etcdbin/etcd")
    assert pid
    os.kill(pid, signal.SIGKILL)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.startswith(f"fencing: error: etcd (pid {pid}) was killed by SIGKILL, seen ")
    assert err.count("\n") == 1 and "Traceback" not in err and out == ""
    path = partial_file(err, tmp_path)
    assert load_history(path).settings.seconds == float(RUN_SECONDS)
    assert "writes decided" in replays(path, capsys)
    assert marked_processes(mark) == []


def test_an_etcd_given_by_address_that_stops_answering(
    own_etcd: EtcdServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An etcd the lab did not start is watched by its answers: it is missed after a few
    status requests in a row go unanswered."""
    assert own_etcd.endpoint is not None and own_etcd.pid is not None
    url = own_etcd.endpoint.url
    mark = "dies-given-etcd"
    process = start_cli(
        mark, "random", "--seconds", RUN_SECONDS, "--etcd", url, "--history", str(tmp_path)
    )
    wait_for_writes(process)
    os.kill(own_etcd.pid, signal.SIGKILL)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.startswith(f"fencing: error: etcd at {url} stopped answering (")
    assert err.count("\n") == 1 and "Traceback" not in err and out == ""
    path = partial_file(err, tmp_path)
    assert "writes decided" in replays(path, capsys)
    assert marked_processes(mark) == []


# ----- interrupted -------------------------------------------------------------------------


def test_ctrl_c_mid_random_run_writes_a_replayable_partial_history(
    etcd: Endpoint, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mark = "interrupt-random"
    path = tmp_path / "run.json"
    process = start_cli(
        mark, "random", "--seconds", RUN_SECONDS, "--etcd", etcd.url, "--history", str(path)
    )
    wait_for_writes(process)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err.startswith("fencing: interrupted by SIGINT ") and err.count("\n") == 1
    assert err.rstrip("\n").endswith(f"marked partial) is in {path}")
    assert out == ""
    data = json.loads(path.read_text())
    assert data["partial"].startswith("interrupted by SIGINT")
    history = load_history(path)
    assert sum(1 for e in history.events if e["kind"] == "deliver") >= 3
    assert "writes decided" in replays(path, capsys)
    assert marked_processes(mark) == []
    assert owned_directories(process.pid) == []


# ----- where histories go ------------------------------------------------------------------


def small_history(started: str) -> History:
    """A history with one event, started at `started`."""
    event = {"t": 0.1, "source": "storage", "kind": "storage-start", "incarnation": 1}
    return History("random", Settings(seconds=1), (event,), started=started)


def test_two_histories_started_in_the_same_microsecond_get_two_files(tmp_path: Path) -> None:
    """The name holds the start time to the microsecond; a clash gets a number, never the
    other run's file."""
    first = small_history("2026-12-01T09:50:00.123456+00:00")
    second = small_history("2026-12-01T09:50:00.123456+00:00")
    target = HistoryTarget(tmp_path)
    paths = [write_history(first, target), write_history(second, target)]
    assert paths[0].name == "lab-random-none-20261201-095000-123456.json"
    assert paths[1].name == "lab-random-none-20261201-095000-123456-2.json"
    assert [load_history(path) for path in paths] == [first, second]


def test_two_runs_started_together_in_one_folder_write_two_files(
    etcd: Endpoint, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [
        start_cli(
            f"together-{n}",
            "random",
            "--seconds",
            "1",
            "--etcd",
            etcd.url,
            "--history",
            str(tmp_path),
        )
        for n in (1, 2)
    ]
    for run in runs:
        _, err = run.communicate(timeout=90)
        assert run.returncode == 0, err
    files = sorted(tmp_path.glob("lab-random-none-*.json"))
    assert len(files) == 2
    for path in files:
        assert "writes decided" in replays(path, capsys)


@pytest.fixture
def no_etcd_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the lab starts or contacts an etcd."""

    def refuse(*_: object) -> None:
        raise AssertionError("the lab went on to etcd")

    monkeypatch.setattr(EtcdServer, "start", refuse)
    monkeypatch.setattr("lab.experiment.check_reachable", refuse)


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ("{tmp}/missing/run.json", "is in a folder that does not exist"),
        ("{tmp}/missing/", "names a folder that does not exist"),
        ("{tmp}/file.txt/run.json", "which is not a folder"),
        ("/dev/null", "which is not a regular file"),
        ("/proc/run.json", "cannot be written: creating a file in /proc fails"),
        ("", "is empty"),
    ],
)
@pytest.mark.parametrize("command", [["random", "--seconds", "1"], ["run", "gap-write"]])
def test_a_history_that_cannot_be_written_is_refused_before_the_run(
    history: str,
    message: str,
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_etcd_starts: None,
) -> None:
    (tmp_path / "file.txt").write_text("not a folder")
    assert main(["lab", *command, "--history", history.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fencing: error: --history ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_several_receivers_to_one_file_check_each_receivers_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_etcd_starts: None
) -> None:
    (tmp_path / "run-fenced.json").mkdir()
    args = ["lab", "random", "--receiver", "none,fenced", "--history", str(tmp_path / "run.json")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"would write {tmp_path / 'run-fenced.json'}, which is not a regular file" in err


# ----- etcd addresses ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://[::1", "is not a valid URL (is an IPv6 bracket left open?)"),
        ("http://[127.0.0.1]:2379", "is not a valid URL"),
        ("ftp://127.0.0.1:2379", "does not start with http:// or https://"),
        ("127.0.0.1:2379", "does not start with http:// or https://"),
        ("http://127.0.0.1", "has no port from 1 to 65535"),
        ("http://127.0.0.1:0", "has no port from 1 to 65535"),
        ("http://127.0.0.1:65536", "has a port that is not a number from 1 to 65535"),
        ("http://127.0.0.1:port", "has a port that is not a number from 1 to 65535"),
        ("http://:2379", "has no host"),
        ("http://etcd_1:2379", "has a host that is neither a name nor an IP address"),
        ("http://me@127.0.0.1:2379", "carries a user name"),
        ("http://127.0.0.1:2379/v3", "has more than a host and a port"),
    ],
)
def test_a_bad_etcd_address_gets_one_line_and_status_2_before_anything_starts(
    url: str, message: str, capsys: pytest.CaptureFixture[str], no_etcd_starts: None
) -> None:
    for command in (["random", "--seconds", "1"], ["run", "gap-write"]):
        assert main(["lab", *command, "--etcd", url]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"fencing: error: the etcd address {url!r} {message}")
        assert "must look like http://HOST:PORT" in err
        assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://127.0.0.1:2379", Endpoint("127.0.0.1", 2379)),
        ("http://[::1]:2379/", Endpoint("::1", 2379)),
        ("https://etcd.example.org:65535", Endpoint("etcd.example.org", 65535, "https")),
        ("HTTP://Localhost:1", Endpoint("localhost", 1)),
    ],
)
def test_a_good_etcd_address_is_read_and_written_back(url: str, endpoint: Endpoint) -> None:
    assert parse_endpoint(url) == endpoint
    assert parse_endpoint(endpoint.url) == endpoint
    client = endpoint.client()
    assert client.base_url == endpoint.url


def test_the_etcd_variable_is_checked_like_the_flag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_etcd_starts: None
) -> None:
    monkeypatch.setenv("FENCING_LAB_ETCD", "http://[::1")
    assert main(["lab", "run", "gap-write"]) == 2
    assert "the etcd address 'http://[::1' is not a valid URL" in capsys.readouterr().err
    with pytest.raises(LabInputError):
        parse_endpoint("http://[::1")


def test_a_run_that_stops_early_is_still_stopped_completely(etcd: Endpoint) -> None:
    """The processes of a run stopped by a dead worker are all gone afterwards (the autouse
    fixture checks the directory)."""
    from lab.runner import LabProcessDied, LabRun

    run = LabRun(etcd, Settings(receiver="fenced"), "dies", 30)
    with pytest.raises(LabProcessDied, match=r"^worker W1 \(pid \d+\) was killed by SIGKILL"), run:
        run.start_workers()
        pids = run.children.pids()
        run.workers[1].process.kill()
        run.answer(1, run.tell(1, {"do": "write"}))
    assert not any(alive(pid) for pid in pids)


# ----- every history a run writes can be replayed ------------------------------------------


def test_the_largest_history_a_run_may_record_is_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The busiest run there is (five workers, read-modify-write checked then applied),
    grown to the most a run may record, written by the lab's writer: `fencing replay`
    reads all of it."""
    budget = history_budget()
    per_cycle = len(history_to_json(busy_history(11))) - len(history_to_json(busy_history(10)))
    cycles = budget // per_cycle
    while len(history_to_json(busy_history(cycles))) > budget:
        cycles -= 1
    history = busy_history(cycles)
    path = write_history(history, HistoryTarget(tmp_path, tmp_path / "busy.json"))
    assert budget - 2 * per_cycle < path.stat().st_size <= budget < REPLAY_LIMIT_BYTES
    out = replays(path, capsys)
    assert f"{4 * cycles} writes decided: {4 * cycles} accepted, 0 rejected" in out


def test_a_run_that_fills_its_history_is_stopped_and_its_history_replayed(
    etcd: Endpoint,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With the replay limit made small, a busy run stops once it has recorded that much,
    and what it wrote stays within the limit."""
    limit = 130_000
    monkeypatch.setattr(runner, "REPLAY_LIMIT_BYTES", limit)
    settings = Settings(
        receiver="fenced-nonatomic", workload="rmw", workers=5, writes=4, gap=0.0, seconds=40
    )
    path = tmp_path / "full.json"
    with pytest.raises(LabStopped) as stopped:
        run_randomized(etcd, settings, path)
    reason = stopped.value.reason
    assert reason.startswith("the run had recorded ") and f"at most {limit:,} bytes" in reason
    assert stopped.value.signum is None and stopped.value.path == path
    assert 0 < path.stat().st_size <= limit
    assert json.loads(path.read_text())["partial"] == reason
    assert "writes decided" in replays(path, capsys)


def test_ctrl_c_while_etcd_starts_leaves_no_process_and_no_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The autouse fixture checks that the etcd process is gone."""

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(etcd_module, "wait_ready", interrupted)
    before = owned_directories(os.getpid())
    server = EtcdServer()
    with pytest.raises(KeyboardInterrupt):
        server.start()
    assert server.pid is None and owned_directories(os.getpid()) == before
