"""Unit tests of the proof report adapter: rows, statuses, readable invariants, CTIs."""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from model.rules import Action
from webapp.proofs_view import cti_text, invariant_lines, readable, rows_of


@dataclass(frozen=True)
class FakeResult:
    """The per-property result shape the prover is specified to return."""

    prop: str
    status: str
    method: str
    shortest: int | None = None
    invariant: object = None
    reason: str = ""
    actions: tuple[Action, ...] | None = None
    cti: object = None


@dataclass(frozen=True)
class FakeReport:
    """A report holding its results by property name."""

    properties: dict[str, FakeResult] = field(default_factory=dict)


def test_rows_follow_the_report_in_property_order() -> None:
    tok, issued = z3.Int("tok[1]"), z3.Int("issued")
    report = FakeReport(
        {
            "P2": FakeResult("P2", "violated", "bmc", 5, actions=(Action("Acquire", 1),)),
            "P1": FakeResult(
                "P1", "proved", "k-induction", invariant=z3.And(tok <= issued, tok >= 0)
            ),
            "P4": FakeResult("P4", "unknown", "induction", reason="z3 gave up", cti={"now": 3}),
        }
    )
    rows = rows_of(report)
    assert [r.prop for r in rows] == ["P1", "P2", "P4"]
    assert rows[0].status_word == "✔ proved" and rows[0].invariant == (
        "tok[1] ≤ issued",
        "tok[1] ≥ 0",
    )
    assert rows[1].shortest == 5 and rows[1].actions == (Action("Acquire", 1),)
    assert rows[2].status == "unknown" and rows[2].cti == "now=3" and rows[2].reason == "z3 gave up"


def test_rows_from_a_list_and_action_dicts() -> None:
    report = {"results": [{"name": "P3", "status": "VIOLATED", "actions": [{"name": "Tick"}]}]}
    [row] = rows_of(report)
    assert row.status == "violated" and row.actions == (Action("Tick"),)


def test_readable_formulas() -> None:
    a, b = z3.Int("a"), z3.Int("b")
    assert readable(z3.Implies(a > 0, z3.Or(b == 1, a != b))) == "(a > 0 ⇒ (b = 1 ∨ a ≠ b))"
    assert readable(a + 1 <= b) == "(a + 1) ≤ b"
    assert readable(z3.If(a > b, a, b) >= 0) == "(if a > b then a else b) ≥ 0"
    assert invariant_lines("hwm ≤ issued") == ("hwm ≤ issued",)
    assert invariant_lines(["x", z3.And(a == 1, b == 2)]) == ("x", "a = 1", "b = 2")
    assert invariant_lines(None) == ()


def test_cti_text() -> None:
    cti = {"before": {"now": 1}, "action": Action("Deliver", 2), "after": {"now": 1, "last": 2}}
    assert cti_text(cti) == "from now=1, Deliver(W2) leads to now=1, last=2"
    assert cti_text(None) == ""
