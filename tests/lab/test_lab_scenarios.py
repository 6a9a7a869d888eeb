"""Every scripted scenario on a real etcd, a real SQLite store and real worker processes:
the outcome the lesson expects, the model's prediction agreeing, and the history conforming."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.etcd import Endpoint
from lab.experiment import run_scenario
from lab.history import load_history
from lab.report import LabReport
from lab.scenarios import SCENARIO_NAMES, scenario

EXPECTED = {
    ("paused-worker", (("worker_check", True),)): (set(), 1, 0),
    ("unchecked-token", ()): ({"P1", "P2", "P3"}, 2, 0),
    ("gap-write", ()): ({"P2"}, 2, 0),
    ("gap-write", (("receiver", "etcd-txn"),)): (set(), 1, 1),
    ("gap-lost-update", ()): ({"P2", "P5"}, 2, 0),
    ("gap-lost-update", (("receiver", "etcd-txn"),)): (set(), 1, 1),
    ("version-token", ()): ({"P2", "P3"}, 2, 0),
    ("version-token", (("token", "lease-id"),)): (set(), 1, 1),
    ("nonatomic-check", ()): ({"P1", "P2", "P3"}, 2, 0),
    ("volatile-mark", ()): ({"P1", "P2", "P3"}, 2, 0),
    ("volatile-mark", (("hwm", "durable"),)): (set(), 1, 1),
    ("crashed-holder", ()): (set(), 1, 0),
    ("crashed-holder", (("expiry", "never"),)): ({"P6"}, 0, 0),
}
"""Per scenario and flags: the properties the real history violates, writes accepted, rejected.
These are the lessons' claims; the test also checks them against the model's prediction.
The paused worker with a plain store and with fencing runs through the CLI (test_lab_cli).
Lease IDs as tokens: one etcd member hands out increasing IDs, so the late write is refused
as with a counter (the model's random token would also allow an ID that goes down)."""


def test_every_scenario_has_an_expectation() -> None:
    assert {name for name, _ in EXPECTED} == set(SCENARIO_NAMES)


@pytest.mark.parametrize(("name", "flags"), list(EXPECTED), ids=lambda v: str(v))
def test_scenario_reproduces_its_lesson_and_conforms(
    name: str, flags: tuple[tuple[str, object], ...], etcd: Endpoint, tmp_path: Path
) -> None:
    violated, accepted, rejected = EXPECTED[(name, flags)]
    settings = scenario(name).settings(**dict(flags))
    report = run_scenario(etcd, name, settings, tmp_path / "history.json")
    check_lesson(report, violated, accepted, rejected)
    assert load_history(tmp_path / "history.json").events == report.history.events


def check_lesson(report: LabReport, violated: set[str], accepted: int, rejected: int) -> None:
    """The real history shows the lesson, agrees with the model's prediction and conforms."""
    seen = {n for n, verdict in report.properties.items() if verdict.violated}
    assert seen == violated, report.text()
    assert (report.counts.accepted, report.counts.rejected) == (accepted, rejected), report.text()
    assert report.prediction_agrees, report.text()
    assert report.conformance.allowed, report.conformance.verdict()
    assert report.conformance.properties_agree, report.conformance.agreement
    text = report.text()
    for violated_name in violated:  # the model's own words for each violation it predicts
        assert any(f"{violated_name} violated: " in line for line in text.splitlines())
    assert "Reason(" not in text  # words, never a Python value's repr
