"""On a real etcd and real processes: a store SIGKILLed with a write in flight leaves that
write's outcome unknown (the worker records `info` and retires), the final read decides it,
and conformance accepts the history either way; the exit status of `lab run` and `lab
random` follows the verdict."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from fencing.cli import main
from lab import experiment, runner, scenarios
from lab.etcd import Endpoint
from lab.experiment import run_driven
from lab.history import load_history
from lab.runner import Driver
from lab.scenarios import predict
from lab.settings import Settings


def store_killed_mid_write(d: Driver) -> None:
    """W1's write is held in flight; the store is killed and started again; W1's lease ends
    and W2 takes the lock and writes."""
    d.acquire(1)
    d.hold(1)
    late = d.write_later(1)
    d.wait_held(1)
    d.restart_storage()
    assert d.outcome(1, late) == "retired after the write ended in info"
    d.wait_lease_end(1)
    d.acquire(2)
    assert d.write(2) == "accepted"
    d.release(2)


def test_a_write_in_flight_when_the_store_is_killed_is_indeterminate(
    etcd: Endpoint, tmp_path: Path
) -> None:
    path = tmp_path / "killed.json"
    settings = Settings(receiver="fenced")
    report = run_driven(etcd, "store-killed", settings, store_killed_mid_write, 8, path)
    infos = [e for e in report.line.events if e.kind == "info"]
    assert [(e.worker, e.get("op"), e.get("request")) for e in infos] == [(1, "write", "W1-1")]
    assert report.witnessed.impossible == (), report.text()
    (write,) = report.witnessed.unknown
    assert (write.worker, write.request) == (1, "W1-1")
    assert (write.decided, write.by) == ("not applied", "the final read of the data")
    (outcome,) = report.conformance.unknown
    assert (outcome.applied, outcome.not_applied) == (True, True)
    assert report.conformance.allowed, report.conformance.verdict()
    assert not report.refused
    assert "W1's write W1-1 (sent at" in report.text()
    # The run folder: the history, the database as the final read found it, the logs.
    folder = tmp_path / "killed-run"
    assert (folder / "history.json").read_bytes() == path.read_bytes()
    with sqlite3.connect(folder / "store.sqlite") as db:
        assert db.execute("SELECT version FROM data").fetchone() == (1,)
    logs = {p.name for p in (folder / "logs").iterdir()}
    assert {"w1.err", "w2.err", "storage-1.err", "storage-2.err"} <= logs
    final = [e for e in load_history(path).events if e["kind"] == "final-read"]
    w2 = next(g for g in report.line.grants.values() if g.worker == 2)
    assert final == [
        {
            "t": final[0]["t"],
            "source": "lab",
            "kind": "final-read",
            "data": {"value": 2_000_001, "version": 1, "mark": w2.token},
            "locks": [],
            "watch": True,
        }
    ]


def test_lab_run_exits_1_when_reality_differs_from_the_prediction(
    etcd: Endpoint,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model that predicts a plain store's outcome for a fenced run (both when the run
    stores its prediction and when the replay makes it again): reality differs."""

    def plain(chosen: Any, settings: Settings) -> Any:
        return predict(chosen, dataclasses.replace(settings, receiver="none"))

    monkeypatch.setattr(experiment, "predict", plain)
    monkeypatch.setattr(scenarios, "predict", plain)
    args = ["lab", "run", "paused-worker", "--receiver", "fenced", "--etcd", etcd.url]
    assert main([*args, "--history", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "REALITY DIFFERED" in captured.out
    assert captured.err == "fencing: reality differed from the model's prediction\n"


def test_lab_random_exits_0_when_consistent_and_1_when_a_witness_is_refused(
    etcd: Endpoint,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ["lab", "random", "--seconds", "2", "--etcd", etcd.url, "--json"]
    assert main([*args, "--history", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["refused"] is False
    events = runner.LabRun.events

    def another_receiver(run: runner.LabRun) -> list[dict[str, Any]]:
        """The store's own record says it ran a fenced receiver."""
        found = events(run)
        for event in found:
            if event["kind"] == "storage-start":
                event["receiver"] = "fenced"
        return found

    monkeypatch.setattr(runner.LabRun, "events", another_receiver)
    assert main([*args, "--history", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["refused"] is True
    assert [f["code"] for f in data["impossible"]] == ["receiver"]
    assert captured.err.startswith("fencing: the history is refused: the witnesses contradict")
