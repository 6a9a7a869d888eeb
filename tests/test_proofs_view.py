"""Unit tests of the proof report adapter: rows from a real report, invariants split by line."""

from __future__ import annotations

from model.design import Bounds
from model.formats.trace import replay
from model.presets import PRESETS
from proofs.report import prove
from webapp.show.proofs_view import invariant_lines, rows_of

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


def test_rows_follow_the_report_in_property_order() -> None:
    """Fencing: P1 proved with `last ≤ hwm` on its own line; P2 violated with a replayable run."""
    design = PRESETS["fencing"].design
    rows = rows_of(prove(design, SMALL))
    assert [row.prop for row in rows] == ["P1", "P2", "P3", "P4", "P5", "P6"]
    p1, p2 = rows[0], rows[1]
    assert p1.status_word == "✔ proved for every horizon" and p1.title == "monotonic acceptance"
    assert "last ≤ hwm" in p1.invariant
    assert p2.status_word == "✘ violated (5 steps)" and p2.shortest == 5
    trace = replay(design, SMALL, p2.actions)
    assert "P2" in trace.steps[-1].violations


def test_invariant_lines_split_conjuncts() -> None:
    """The prover's conjunctions and its `; and` range clause become separate lines."""
    text = "last ≤ hwm ∧ issued = grants; and every variable ≥ 0, holder ≤ 2"
    assert invariant_lines(text) == (
        "last ≤ hwm",
        "issued = grants",
        "every variable ≥ 0, holder ≤ 2",
    )
    assert invariant_lines(None) == () and invariant_lines("") == ()
