"""AppTest: the Explore page's random and hypothesis strategies show violations found by
random runs and say unknown, with the runs and steps tried, for everything else (never
holds); the strategy, runs and seed live in the page's link."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from fencing.strategies import unknown_words
from model.check.explorer import explore
from model.check.hypothesis_search import hypothesis_search
from model.check.random_search import random_search
from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from tests.app.conftest import APP, TIMEOUT
from tests.app.helpers import shown as plain
from tests.app.helpers import switch_to, verdict_cells


def searched(preset: str, strategy: str, runs: int, seed: int) -> AppTest:
    """The Explore page after a search by random runs of a preset, with no exception."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    switch_to(at, "explore").run()
    at.selectbox(key="preset_choice").set_value(preset).run()
    at.radio(key="strategy").set_value(strategy).run()
    at.number_input(key="runs").set_value(runs).run()
    at.number_input(key="seed").set_value(seed).run()
    at.button(key="run-button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_random_search_says_unknown_with_its_runs_and_steps() -> None:
    at = searched("lease-only", "random", runs=40, seed=2)
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
    assert "strategy in the link must be one of breadth-first, random, hypothesis" in shown
    assert "runs in the link must be a whole number" in shown
    assert "seed in the link must be a whole number" in shown
    assert at.radio(key="strategy").value == "breadth-first"


def test_a_hypothesis_search_shows_what_the_search_finds_and_keeps_it_in_the_link() -> None:
    """The page's table is the Hypothesis search's own (violated with the length of the run
    shown, unknown with the runs and steps tried; here it finds what breadth-first finds),
    the command line it offers is the same search, and its link reopens it."""
    at = searched("fencing-strict", "hypothesis", runs=30, seed=3)
    row = verdict_cells(at, "verdict")
    expected = hypothesis_search(
        PRESETS["fencing-strict"].design, REFERENCE_BOUNDS, runs=30, seed=3
    )
    for name, verdict in expected.verdicts.items():
        tried = expected.tried[name]
        if verdict.violated:
            assert row[name] == f"✘ violated ({verdict.shortest} steps)"
        else:
            assert row[name].endswith(unknown_words(tried.runs, tried.steps, "hypothesis"))
            assert "Hypothesis search: 30 runs" in row[name]
    captions = [str(c.value) for c in at.caption]
    assert "Not complete: a Hypothesis search never shows a property holds." in captions
    exhaustive = explore(PRESETS["fencing-strict"].design, REFERENCE_BOUNDS).verdicts
    violated = {name for name, verdict in expected.verdicts.items() if verdict.violated}
    assert violated == {name for name, verdict in exhaustive.items() if verdict.violated}
    assert at.radio(key="cex").value == sorted(violated)[0]
    assert "--strategy hypothesis --runs 30 --seed 3" in at.code[0].value
    link = {key: at.query_params[key] for key in at.query_params}
    assert (link["strategy"], link["runs"], link["seed"]) == ("hypothesis", "30", "3")
    fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    fresh.run()
    switch_to(fresh, "explore")
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert fresh.radio(key="strategy").value == "hypothesis"
    assert fresh.table[0].value.to_dict("records") == at.table[0].value.to_dict("records")
