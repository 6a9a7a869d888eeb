"""The receiver's rule alone: the atomic proof holds, the non-atomic one breaks as z3 shows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.design import Bounds, Design
from model.layout import slot
from model.rules import Admission, Rule, RuleBuilder
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


def test_a_receiver_that_lets_a_lower_token_through_is_not_proved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`token ≥ hwm − 1` instead of `token ≥ hwm`: z3 refutes the P1 obligation and the
    report says which step breaks it."""
    original = RuleBuilder.admission

    def off_by_one(self: RuleBuilder, s: object, w: int) -> Admission:
        found = original(self, s, w)  # type: ignore[arg-type]
        return Admission(found.test, found.token, found.against, found.token >= s.hwm - 1)  # type: ignore[attr-defined]

    monkeypatch.setattr(RuleBuilder, "admission", off_by_one)
    report = prove_receiver()
    assert not report.proved
    refuted = [o for o in report.obligations if o.status == "refuted"]
    assert refuted and all("never accepts a token below last (P1)" in o.claim for o in refuted)
    assert {o.claim.split(":")[0] for o in refuted} == {f"W={w}" for w in range(1, 6)}


def test_another_action_writing_the_mark_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """If time passing reset the mark, the proof's "only the receiver writes hwm and last"
    obligation is refuted and names Tick."""
    original = RuleBuilder.tick

    def tick_resets_the_mark(self: RuleBuilder) -> Rule:
        rule = original(self)
        return replace(rule, effect=lambda s: {**rule.effect(s), "hwm": 0})

    monkeypatch.setattr(RuleBuilder, "tick", tick_resets_the_mark)
    report = prove_receiver()
    assert not report.proved
    named = [o for o in report.obligations if "only the receiver writes" in o.claim]
    assert all(o.status == "refuted" and o.detail == "Tick" for o in named) and len(named) == 5


def test_the_nonatomic_story_is_two_checks_then_two_writes_with_real_values() -> None:
    """The tokens in flight differ, both checks pass on a fresh mark, the higher write lands
    first and the lower one second: the mark and last follow every step."""
    report = prove_receiver()
    (low, high) = sorted(report.tokens.values())
    assert 1 <= low < high
    checks, applies = report.steps[:2], report.steps[2:]
    assert all(s.hwm == 0 and s.last == 0 for s in checks)
    assert [s.token for s in applies] == [high, low]
    assert [(s.hwm, s.last) for s in applies] == [(high, high), (low, low)]
    data = receiver_report_to_json(report)
    assert data["nonatomic"]["steps"][-1]["breaks_p1"] is True
    assert [o["status"] for o in data["obligations"]] == ["proved"] * len(report.obligations)
