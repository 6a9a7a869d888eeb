"""The receiver's rule alone: the atomic proof holds, the non-atomic one breaks as z3 shows."""

from __future__ import annotations

import pytest

from model.design import Bounds, Design
from model.layout import slot
from model.rules import RuleBuilder
from model.system import System
from proofs.receiver import prove_receiver
from proofs.report import format_receiver_report, receiver_report_to_json


def test_atomic_fenced_receiver_is_proved_for_every_team_size() -> None:
    report = prove_receiver()
    assert report.proved
    claims = " ".join(o.claim for o in report.obligations)
    assert "W=5: Deliver(W5) never accepts a token below last" in claims


def test_nonatomic_counterexample_replays_in_the_model() -> None:
    report = prove_receiver()
    assert [s.action.name for s in report.steps] == ["Check", "Check", "Apply", "Apply"]
    assert report.steps[-1].breaks_p1 and not any(s.breaks_p1 for s in report.steps[:-1])
    system = System(Design(receiver="fenced-nonatomic"), Bounds(2, 1, 1, 2, 1))
    values = dict.fromkeys(system.layout.columns, 0)
    for w, token in report.tokens.items():
        values[slot("tok", w)] = values[slot("gid", w)] = token
        values[slot("pending", w)] = 1
    state = tuple(values[c] for c in system.layout.columns)
    for step in report.steps[:-1]:
        state = system.apply(state, system.rule_for(step.action))
    assert "P1" in system.violations(state, system.rule_for(report.steps[-1].action))


def test_receiver_report_formats() -> None:
    report = prove_receiver()
    assert "P1 broken" in format_receiver_report(report)
    assert receiver_report_to_json(report)["proved"] is True


def test_a_receiver_that_accepts_nothing_gives_a_vacuous_proof_not_proved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If the rule could never accept a write, "never accepts a lower token" proves nothing:
    the obligation is vacuous and the report does not say PROVED."""
    monkeypatch.setattr(RuleBuilder, "admits", lambda self, s, w: False)
    report = prove_receiver()
    assert not report.proved
    vacuous = [o for o in report.obligations if o.status == "vacuous"]
    assert vacuous and all("P1" in o.claim for o in vacuous)
    assert "NOT PROVED" in format_receiver_report(report)
