"""AppTest: the proofs page with the real z3 prover."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.helpers import all_text

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "screens" / "proofs.py")


def open_proofs() -> AppTest:
    """Run the proofs page; it must never raise."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_page_shows_verdicts_invariants_and_animated_counterexamples() -> None:
    """Fencing: P1 proved with its invariant shown, P2's z3 run stepped to its end."""
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


def test_a_design_without_fencing_is_violated_not_proved() -> None:
    """Lease-only: P1 is violated by a run of 8 steps, never reported as proved."""
    at = open_proofs()
    at.selectbox(key="proof-preset").set_value("lease-only").run()
    at.toggle(key="proof-run").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    text = all_text(at)
    assert "P1, monotonic acceptance: ✘ violated" in text
    assert "P1, monotonic acceptance: ✔ proved" not in text
