"""AppTest: the state space page (graph, counts, symmetry, the size limit)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.helpers import all_text

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "screens" / "state_space.py")


def open_space() -> AppTest:
    """Run the state-space page; it must never raise."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_small_bounds_draw_the_graph_with_the_counterexample() -> None:
    at = open_space()
    text = all_text(at)
    assert "354 states, 186 up to renaming the workers" in text
    assert "shortest run violating **P2** (5 steps)" in text
    assert len(at.get("plotly_chart")) == 2
    assert [m.value for m in at.metric][:2] == ["354", "728"]


def test_a_property_that_holds_has_no_path() -> None:
    at = open_space()
    at.selectbox(key="space-preset").set_value("fencing")
    at.selectbox(key="space-prop").set_value("P1").run()
    assert "P1 holds within these bounds" in all_text(at)


def test_above_the_limit_only_counts_and_the_chart() -> None:
    at = open_space()
    for name, value in (("workers", 3), ("horizon", 6), ("grants", 3), ("writes", 2)):
        at.number_input(key=f"space-{name}").set_value(value)
    at.selectbox(key="space-preset").set_value("fencing").run()
    text = all_text(at)
    assert "13,213 states is more than the 2,000 this page draws" in text
    assert len(at.get("plotly_chart")) == 1
