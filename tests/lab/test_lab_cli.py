"""`fencing lab` end to end: the JSON object, the paused worker with a plain store and with
fencing (an etcd the CLI starts itself, and one named by FENCING_LAB_ETCD), bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fencing.cli import main
from lab.etcd import ETCD_ENV, Endpoint
from lab.history import load_history
from lab.report import analyse
from tests.lab.test_lab_scenarios import check_lesson

KEYS = {
    "scenario",
    "receiver",
    "token",
    "operations",
    "accepted",
    "rejected",
    "properties",
    "conformance",
    "history",
}


def lab_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """Run `fencing lab ...` and return its JSON object."""
    assert main(["lab", *args]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_paused_worker_plain_store_accepts_the_stale_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --etcd and no FENCING_LAB_ETCD: the CLI starts etcd from the wheel and stops it."""
    path = tmp_path / "plain.json"
    args = ["run", "paused-worker", "--receiver", "none", "--json", "--history", str(path)]
    data = lab_json(args, capsys)
    assert set(data) >= KEYS
    assert (data["scenario"], data["receiver"], data["token"]) == (
        "paused-worker",
        "none",
        "create-revision",
    )
    assert (data["operations"], data["accepted"], data["rejected"]) == (2, 2, 0)
    properties = data["properties"]
    assert {name: properties[name]["violated"] for name in properties} == {  # type: ignore[index]
        "P1": True,
        "P2": True,
        "P3": True,
        "P5": False,
        "P6": False,
    }
    assert data["conformance"]["allowed"] is True  # type: ignore[index]
    assert data["conformance"]["first_refused"] is None  # type: ignore[index]
    assert data["history"] == str(path)
    report = analyse(load_history(path), path)
    check_lesson(report, {"P1", "P2", "P3"}, 2, 0)
    grant = next(iter(report.line.grants.values()))  # W1's: etcd's sweep revoked it late
    assert grant.ended_by == "revoked" and grant.ended is not None
    assert 1.0 < grant.ended - grant.t < 2.0
    late = report.properties["P2"].violations[0]
    assert late.t > grant.ended and "etcd revoked its lease" in late.reason


def test_paused_worker_fenced_store_refuses_it(
    etcd: Endpoint,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The etcd named by FENCING_LAB_ETCD is used; the report says the write was rejected."""
    monkeypatch.setenv(ETCD_ENV, etcd.url)
    path = tmp_path / "fenced.json"
    assert (
        main(["lab", "run", "paused-worker", "--receiver", "fenced", "--history", str(path)]) == 0
    )
    out = capsys.readouterr().out
    assert "the store rejects W1's write" in out
    assert "the model allows this history" in out
    assert "P1 monotonic acceptance         holds" in out
    history = load_history(path)
    assert history.etcd["endpoint"] == etcd.url
    check_lesson(analyse(history), set(), 1, 1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "no-such-scenario"], "unknown scenario 'no-such-scenario'"),
        (["random", "--workers", "0"], "workers = 0 is out of range"),
        (["random", "--seconds", "0"], "--seconds must be above 0"),
        (["random", "--receiver", "none,magic"], "receiver 'magic' is not known"),
        (["run", "gap-write", "--etcd", "ftp://example"], "must look like http://HOST:PORT"),
        (["run", "gap-write", "--gap", "-1"], "gap (seconds) = -1 is out of range"),
        (
            ["run", "crashed-holder", "--expiry", "never", "--keepalive", "0.3"],
            "a lock without a lease has nothing to keep alive",
        ),
        (["run", "crashed-holder", "--keepalive", "9"], "keepalive (seconds between renewals)"),
    ],
)
def test_bad_input_gets_one_line_and_status_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lab", *args]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err + captured.out


def test_an_etcd_that_does_not_answer_says_what_to_do(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lab import etcd as etcd_module
    from lab.etcd import free_port

    monkeypatch.setattr(etcd_module, "REACH_SECONDS", 0.5)
    assert main(["lab", "run", "gap-write", "--etcd", f"http://127.0.0.1:{free_port()}"]) == 1
    err = capsys.readouterr().err
    assert "did not answer" in err and "drop --etcd to let the lab start its own" in err


def test_scenarios_lists_the_models_prediction(capsys: pytest.CaptureFixture[str]) -> None:
    data = lab_json(["scenarios", "--json"], capsys)
    rows = {row["name"]: row for row in data["scenarios"]}  # type: ignore[attr-defined]
    assert "violates P1, P2, P3" in rows["paused-worker"]["prediction"]
    assert "violates P2, P5" in rows["gap-lost-update"]["prediction"]
    crashed = rows["crashed-holder"]
    assert crashed["prediction"].endswith("violates no property")
    (never,) = crashed["variants"]
    assert never["flags"] == "--expiry never" and never["prediction"].endswith("violates P6")
