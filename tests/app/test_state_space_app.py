"""AppTest: the state space page (graph, counts, symmetry, the size limit)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.helpers import all_text, page_alone

PAGE = "state-space"


def open_space() -> AppTest:
    """Run the state-space page; it must never raise."""
    at = page_alone(PAGE, default_timeout=60)
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


def test_the_page_says_it_starts_below_the_reference_bounds() -> None:
    """The only page that starts below the reference bounds says so, and why."""
    from model.design import REFERENCE_BOUNDS
    from webapp.screens.state_space_page import SMALL_BOUNDS

    at = open_space()
    shown = {name: at.number_input(key=f"space-{name}").value for name in SMALL_BOUNDS.to_dict()}
    assert shown == SMALL_BOUNDS.to_dict() != REFERENCE_BOUNDS.to_dict()
    assert (
        f"starts at smaller bounds ({SMALL_BOUNDS.short()}) than the other pages "
        f"({REFERENCE_BOUNDS.short()}" in all_text(at)
    )


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
    # Instead of the whole graph: the shortest P2 run with its neighbours, and smaller bounds.
    assert "The shortest run violating P2, and every state one step away from it" in text
    assert [c.key for c in at.get("plotly_chart")] == ["space-depths", "space-run-graph"]
    smaller = at.button(key="space-smaller")
    assert "Draw the same design at 3 workers" in smaller.label
    smaller.click().run()
    assert not at.exception
    assert "space-graph" in [c.key for c in at.get("plotly_chart")]


def test_a_budget_stop_says_what_was_and_was_not_counted() -> None:
    """At its budget the page gives no meaningless reduction factor."""
    from model.design import Bounds
    from model.presets import PRESETS
    from webapp.show.state_space import count_space

    counts = count_space(PRESETS["fencing"].design, Bounds(3, 2, 6, 3, 2), max_states=2_000)
    text = counts.reduction()
    assert "stopped at its budget" in text and "not known" in text and "x fewer" not in text


def test_the_link_reopens_the_page() -> None:
    """The design, bounds and property are in the link; a fresh page opened from it agrees."""
    at = open_space()
    at.selectbox(key="space-preset").set_value("fencing")
    at.selectbox(key="space-prop").set_value("P1")
    at.number_input(key="space-horizon").set_value(3).run()
    link = {key: at.query_params[key] for key in at.query_params}
    assert link["preset"] == "fencing" and link["prop"] == "P1" and link["horizon"] == "3"
    fresh = page_alone(PAGE, default_timeout=60)
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert fresh.selectbox(key="space-preset").value == "fencing"
    assert fresh.selectbox(key="space-prop").value == "P1"
    assert fresh.number_input(key="space-horizon").value == 3
    assert [m.value for m in fresh.metric] == [m.value for m in at.metric]


def test_a_bad_link_is_reported_not_raised() -> None:
    at = page_alone(PAGE, default_timeout=60)
    at.query_params["workers"] = "1e400"
    at.query_params["preset"] = "[evil](http://x)"
    at.run()
    assert not at.exception
    assert "partly not understood" in all_text(at)
    assert "](http" not in " ".join(e.value for e in at.error)


def test_a_custom_design_is_counted_from_its_link_and_shown_as_a_command() -> None:
    from model.check.explorer import explore
    from model.design import Bounds, Design, Receiver

    at = page_alone(PAGE, default_timeout=60)
    for key, value in {"receiver": "none", "worker_check": "1", "horizon": "3"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    assert at.selectbox(key="space-preset").value == "worker-checks-lease"
    expected = explore(Design(receiver=Receiver.NONE, worker_check=True), Bounds(horizon=3))
    assert at.metric[0].value == f"{expected.states:,}"
    assert any("fencing check --receiver none --worker-check" in c.value for c in at.code)


def test_changing_an_option_makes_the_design_custom_and_keeps_it_in_the_link() -> None:
    from model.check.explorer import explore
    from model.design import Design, Token
    from webapp.screens.state_space_page import SMALL_BOUNDS

    at = open_space()
    at.selectbox(key="space-option-token").set_value("random").run()
    assert not at.exception
    assert at.selectbox(key="space-preset").value == "(custom)"
    assert at.query_params["token"] == "random" and at.query_params["receiver"] == "none"
    assert "preset" not in at.query_params
    expected = explore(Design(token=Token.RANDOM, receiver="none"), SMALL_BOUNDS)
    assert at.metric[0].value == f"{expected.states:,}"
    at.selectbox(key="space-preset").set_value("fencing").run()
    assert at.selectbox(key="space-option-token").value == "counter"
    assert "token" not in at.query_params and at.query_params["preset"] == "fencing"


def test_a_design_that_makes_no_sense_is_refused_in_words() -> None:
    at = page_alone(PAGE, default_timeout=60)
    at.query_params["fenced_reads"] = "1"
    at.run()
    assert not at.exception
    assert "partly not understood" in all_text(at)
    at.checkbox(key="space-option-fenced_reads").check().run()
    assert any("This design is refused" in e.value for e in at.error)
