"""AppTest: the proofs page, against the prover's specified report shape (a stand-in prover
is installed when `proofs.report` is not in this build, so the page itself is tested)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest
import z3
from streamlit.testing.v1 import AppTest

from model.design import Bounds, Design
from model.explorer import explore
from tests.app.helpers import all_text

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "screens" / "proofs.py")
REAL_PROVER = importlib.util.find_spec("proofs.report") is not None


def stand_in_prove(design: Design, bounds: Bounds) -> dict[str, object]:
    """A report in the specified shape: explorer verdicts, and an invariant for what holds."""
    found = explore(design, bounds)
    hwm, last = z3.Int("hwm"), z3.Int("last")
    results = {}
    for name, verdict in found.verdicts.items():
        if verdict.violated:
            results[name] = {
                "status": "violated",
                "method": "bmc",
                "shortest": verdict.shortest,
                "actions": list(verdict.actions or ()),
            }
        else:
            results[name] = {
                "status": "proved",
                "method": "induction",
                "invariant": z3.And(last <= hwm, hwm >= 0),
            }
    return {"properties": results}


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Install the stand-in prover as `proofs.report` for this test only."""
    module = types.ModuleType("proofs.report")
    module.prove = stand_in_prove  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "proofs.report", module)


def open_proofs() -> AppTest:
    """Run the proofs page; it must never raise."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.usefixtures("stand_in")
def test_the_page_shows_verdicts_invariants_and_animated_counterexamples() -> None:
    at = open_proofs()
    assert "Switch on to run z3" in all_text(at)
    at.toggle(key="proof-run").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    text = all_text(at)
    assert "P1, monotonic acceptance: ✔ proved" in text
    assert "P2, no write outside its lease: ✘ violated" in text
    assert any("last ≤ hwm" in c.value for c in at.code)
    assert "Step 0 of 5" in text
    at.button(key="proof-P2-last").click().run()
    assert "Step 5 of 5" in all_text(at)


@pytest.mark.usefixtures("stand_in")
def test_bounds_are_validated() -> None:
    at = open_proofs()
    at.number_input(key="proof-workers").set_value(5).run()
    assert not at.exception


@pytest.mark.skipif(REAL_PROVER, reason="proofs.report exists: the missing-prover notice is moot")
def test_without_the_prover_the_page_says_so() -> None:
    at = open_proofs()
    assert "not part of this build yet" in all_text(at)


@pytest.mark.skipif(not REAL_PROVER, reason="proofs.report is not in this build yet")
def test_the_real_prover_renders_on_the_page() -> None:
    at = open_proofs()
    at.toggle(key="proof-run").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    text = all_text(at)
    assert "P1, monotonic acceptance" in text and "returned no per-property results" not in text
