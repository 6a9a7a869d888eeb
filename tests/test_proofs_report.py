"""The report: statuses, JSON shape, text rows, and budgets that end in `unknown`."""

from __future__ import annotations

from model.design import Bounds, Design
from model.presets import PRESETS
from proofs.report import format_report, prove, report_to_json

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


def test_fencing_report() -> None:
    report = prove(Design(), SMALL)
    statuses = {k: (v.status, v.method, v.shortest) for k, v in report.properties.items()}
    assert statuses["P1"] == ("proved", "induction", None)
    assert statuses["P2"] == ("violated", "bmc", 5)
    assert statuses["P3"][0] == "proved"
    data = report_to_json(report)
    assert set(data["properties"]) == {"P1", "P2", "P3", "P4", "P5"}
    assert set(data["properties"]["P1"]) >= {"status", "method", "shortest", "invariant"}
    assert data["properties"]["P1"]["invariant"].startswith("last ≤ hwm")
    text = format_report(report)
    assert "P2       violated  bmc" in text


def test_a_broken_design_is_never_proved() -> None:
    report = prove(PRESETS["lease-only"].design, SMALL)
    for name in ("P1", "P2", "P3"):
        assert report.properties[name].status == "violated"


def test_tiny_budget_reports_unknown_with_reason() -> None:
    report = prove(Design(), SMALL, rlimit=1, timeout_ms=1000, spacer_timeout_ms=1000)
    assert all(r.status == "unknown" for r in report.properties.values())
    assert all(r.reason for r in report.properties.values())
