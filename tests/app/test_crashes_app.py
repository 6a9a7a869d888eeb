"""AppTest: P6 beside P1..P5 on the Explore, Compare and Proofs pages, for the crash presets."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.testing.v1 import AppTest

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from tests.app.helpers import all_text, page_alone, verdict_cells

Opener = Callable[..., AppTest]
PROOFS = "proofs"


def test_explore_shows_a_lock_without_a_lease_stranding_its_crashed_holder(
    open_page: Opener,
) -> None:
    """The row has a P6 cell, the counterexample list offers P6 and its run is told."""
    at = open_page("explore")
    at.selectbox(key="preset_choice").select("lock-without-lease").run()
    assert at.selectbox(key="expiry").value == "never"
    for name, value in REFERENCE_BOUNDS.to_dict().items():
        at.number_input(key=name).set_value(value)
    at.run()
    at.button(key="run-button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    expected = explore(PRESETS["lock-without-lease"].design, REFERENCE_BOUNDS)
    row = verdict_cells(at, "verdict")
    assert row["P6"] == f"✘ violated ({expected.verdicts['P6'].shortest} steps)"
    assert row["P2"] == "✔ holds"
    assert at.radio(key="cex").options == ["P6, lock freed after a crash (5 steps)"]
    at.radio(key="cex").set_value("P6").run()
    assert any("P6 violated" in e.value for e in at.error)
    assert at.button(key="explore-P6-last").disabled  # the run opens on its violating step
    text = all_text(at)
    assert "Step 5 of 5" in text and "the lock never expires" in text


def test_compare_has_a_p6_column(open_page: Opener) -> None:
    """The matrix shows P6 for every preset: vacuous without crashes, 5 without a lease."""
    at = open_page("compare")
    matrix = at.dataframe[0].value.set_index("design")
    assert matrix.loc["lock-without-lease", "P6"] == "✘ 5"
    assert matrix.loc["keepalive-fencing", "P6"] == "✔"
    assert matrix.loc["fencing", "P6"] == "○"
    at.selectbox(key="cell").select("lock-without-lease · P6").run()
    assert not at.exception
    assert any("P6 violated" in e.value for e in at.error)


def test_proofs_prove_a_keepalive_frees_a_crashed_holder() -> None:
    """The proofs page shows P6 proved for every horizon, with its invariant."""
    at = page_alone(PROOFS, default_timeout=120)
    at.run()
    at.selectbox(key="proof-preset").set_value("keepalive-fencing").run()
    at.toggle(key="proof-run").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    text = all_text(at)
    assert "P6, lock freed after a crash: ✔ proved for every horizon" in text
    assert any("expires < (down[1] + 2)" in c.value for c in at.code)
