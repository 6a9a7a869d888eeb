"""The report: statuses, JSON shape, text rows, and budgets that end in `unknown`."""

from __future__ import annotations

import pytest

from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.presets import PRESETS
from proofs.induction import InductionResult, Prover, prove_by_spacer
from proofs.report import format_report, prove, report_to_json

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


def test_fencing_report() -> None:
    report = prove(Design(), SMALL)
    statuses = {k: (v.status, v.method, v.shortest) for k, v in report.properties.items()}
    assert statuses["P1"] == ("proved", "induction", None)
    assert statuses["P2"] == ("violated", "bmc", 5)
    assert statuses["P3"][0] == "proved"
    data = report_to_json(report)
    assert set(data["properties"]) == {"P1", "P2", "P3", "P4", "P5", "P6"}
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
    statuses = {name: r.status for name, r in report.properties.items()}
    # z3 gives up on everything; P5 is vacuous (no read-modify-write) whatever z3 says, and
    # P6 too (nobody crashes).
    assert statuses == {
        "P1": "unknown",
        "P2": "unknown",
        "P3": "unknown",
        "P4": "unknown",
        "P5": "vacuous",
        "P6": "vacuous",
    }
    assert all(r.reason for r in report.properties.values())


def test_random_tokens_are_never_proved_by_a_model_without_acquire() -> None:
    """Lifting the bounds leaves random tokens no Acquire: neither induction nor Spacer may
    then claim a proof; what holds within the bounds is reported as holds, with why."""
    report = prove(PRESETS["random-token"].design, REFERENCE_BOUNDS)
    p1 = report.properties["P1"]
    assert p1.status == "holds" and "no Acquire action" in (p1.reason or "")
    assert all(r.status != "proved" for r in report.properties.values())
    assert spacer_result(PRESETS["random-token"].design, "P1").status == "unknown"


def test_a_vacuous_property_is_never_reported_proved() -> None:
    """P5 without read-modify-write is vacuous, however easily z3 proves it."""
    report = prove(Design(), SMALL)
    assert report.properties["P5"].status == "vacuous"
    assert report.properties["P1"].status == "proved"


def test_a_budget_the_explorer_cannot_finish_gives_unknown_not_holds() -> None:
    """With the exploration cut short, a clean BMC search up to its depth is not `holds`."""
    report = prove(PRESETS["lease-only"].design, REFERENCE_BOUNDS, max_states=200)
    assert "stopped" in report.explored
    for name, result in report.properties.items():
        assert result.status in ("violated", "unknown", "proved", "vacuous"), (name, result)
    assert report.properties["P4"].status != "holds"


def test_one_deadline_for_the_whole_proof() -> None:
    """A tiny overall deadline leaves the open properties unknown, with the reason."""
    report = prove(PRESETS["fencing"].design, REFERENCE_BOUNDS, max_seconds=0.01)
    assert report.seconds < 30
    assert any(r.status == "unknown" for r in report.properties.values())


def spacer_result(design: Design, name: str) -> InductionResult:
    """Spacer's verdict on one property at the reference bounds."""
    return prove_by_spacer(design, REFERENCE_BOUNDS, name)


def test_the_report_json_and_text_carry_every_verdict_exactly() -> None:
    """Status, holds, method, shortest, the run's actions and the reasons, as data and text."""
    report = prove(PRESETS["lease-only"].design, SMALL)
    data = report_to_json(report)
    assert data["design"]["receiver"] == "none" and data["bounds"]["horizon"] == 4
    assert data["explored"].startswith("every reachable state explored (354)")
    p1, p4 = data["properties"]["P1"], data["properties"]["P4"]
    assert (p1["status"], p1["holds"], p1["method"], p1["shortest"]) == (
        "violated",
        False,
        "bmc",
        8,
    )
    assert len(p1["actions"]) == 8 and p1["actions"][-1] == {"name": "Deliver", "worker": 1}
    assert (p4["status"], p4["holds"], p4["shortest"]) == ("vacuous", True, None)
    assert p4["reason"].startswith(
        "never exercised (the resource checks nothing, so it never rejects a request)"
    )
    text = format_report(report)
    assert "P1       violated  bmc                  8" in text
    assert "P4 holds vacuously: never exercised (the resource checks nothing" in text
    assert "P1 counterexample: Acquire(W1), " in text and "total " in text


def test_an_induction_proof_names_the_invariant_it_needed() -> None:
    result = prove(Design(), SMALL).properties["P1"]
    assert result.status == "proved" and result.method == "induction"
    assert result.invariant is not None and result.invariant.startswith("last ≤ hwm")
    assert (
        result.reason == "for every horizon and grant count, with these workers, lease and writes"
    )


@pytest.mark.slow
def test_spacer_closes_what_the_catalog_cannot(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no ready-made invariants, induction cannot prove fencing's P1; the report then
    takes Spacer's proof, with its invariant."""
    import proofs.report

    monkeypatch.setattr(
        proofs.report, "Prover", lambda *args, **kwargs: Prover(*args, catalog=(), **kwargs)
    )
    result = prove(Design(), SMALL).properties["P1"]
    assert (result.status, result.method) == ("proved", "spacer")
    assert result.invariant and result.reason == (
        "Spacer's invariant, for every horizon and grant count"
    )


def test_a_proof_out_of_time_says_so() -> None:
    report = prove(PRESETS["fencing"].design, REFERENCE_BOUNDS, max_seconds=0.01)
    open_ones = [r for r in report.properties.values() if r.status == "unknown"]
    assert open_ones and all("time budget" in (r.reason or "") for r in open_ones)


@pytest.mark.slow
def test_keepalives_prove_a_crashed_holder_is_freed_and_no_lease_breaks_it() -> None:
    """With a lease and renewals P6 is proved for every horizon, its invariant named; a lock
    without a lease breaks it in L + 3 steps, found by bounded model checking."""
    keepalive = prove(PRESETS["keepalive-fencing"].design, SMALL).properties["P6"]
    assert (keepalive.status, keepalive.method) == ("proved", "induction")
    assert keepalive.invariant is not None and "expires < (down[1] + 2)" in keepalive.invariant
    no_lease = prove(PRESETS["lock-without-lease"].design, SMALL).properties["P6"]
    assert (no_lease.status, no_lease.method, no_lease.shortest) == ("violated", "bmc", 5)
