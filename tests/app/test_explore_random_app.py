"""AppTest: the Explore page's random strategy shows violations found at random and says
unknown, with the runs and steps tried, for everything else (never holds)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from fencing.strategies import unknown_words
from model.check.random_search import random_search
from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from tests.app.conftest import APP, TIMEOUT
from tests.app.helpers import shown as plain
from tests.app.helpers import switch_to, verdict_cells


def test_a_random_search_says_unknown_with_its_runs_and_steps() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    switch_to(at, "explore").run()
    at.selectbox(key="preset_choice").set_value("lease-only").run()
    at.radio(key="strategy").set_value("random").run()
    at.number_input(key="runs").set_value(40).run()
    at.number_input(key="seed").set_value(2).run()
    at.button(key="run-button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    row = verdict_cells(at, "verdict")
    expected = random_search(PRESETS["lease-only"].design, REFERENCE_BOUNDS, runs=40, seed=2)
    for name, verdict in expected.verdicts.items():
        tried = expected.tried[name]
        if verdict.violated:
            assert row[name] == f"✘ violated ({verdict.shortest} steps)"
        else:
            assert row[name].endswith(unknown_words(tried.runs, tried.steps))
    assert [row[p].startswith("✘") for p in ("P1", "P2", "P3", "P4", "P5")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert not any("holds" in row[name] for name in expected.verdicts)
    assert at.radio(key="cex").value == "P1"
    at.radio(key="strategy").set_value("breadth-first").run()
    assert not at.table, "changing the strategy hides the old results"


def test_a_random_search_link_reopens_the_same_search() -> None:
    """The strategy, runs and seed are kept in the link; a fresh session shows the same."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    switch_to(at, "explore").run()
    at.selectbox(key="preset_choice").set_value("fencing").run()
    at.radio(key="strategy").set_value("random").run()
    at.number_input(key="runs").set_value(25).run()
    at.number_input(key="seed").set_value(4).run()
    at.button(key="run-button").click().run()
    link = {key: at.query_params[key] for key in at.query_params}
    assert (link["strategy"], link["runs"], link["seed"]) == ("random", "25", "4")
    fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    fresh.run()
    switch_to(fresh, "explore")
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert fresh.radio(key="strategy").value == "random"
    assert fresh.number_input(key="runs").value == 25
    table = fresh.table[0].value.to_dict("records")
    assert table == at.table[0].value.to_dict("records")


def test_a_bad_strategy_in_a_link_is_reported_and_replaced() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    switch_to(at, "explore")
    at.query_params.update(strategy="guess", runs="1e400", seed="-3")
    at.run()
    assert not at.exception
    shown = " ".join(plain(e.value) for e in at.error)
    assert "strategy in the link must be one of breadth-first, random" in shown
    assert "runs in the link must be a whole number" in shown
    assert "seed in the link must be a whole number" in shown
    assert at.radio(key="strategy").value == "breadth-first"
