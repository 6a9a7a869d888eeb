"""AppTest: every preset's Explore page, reopened from its own link in a fresh session,
shows the same design, the same counts and the same verdicts."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from model.presets import PRESET_NAMES
from tests.app.conftest import APP, TIMEOUT
from tests.app.helpers import all_text, switch_to, verdict_cells


def explore_page(**params: str) -> AppTest:
    """A fresh session on the Explore page, opened with these URL parameters."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    switch_to(at, "explore")
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def seen(at: AppTest) -> tuple[object, ...]:
    """What a reader sees: the metrics, the verdict table and the chosen counterexample."""
    table = at.table[0].value.to_dict("records") if at.table else []
    radio = next((r.value for r in at.radio if r.key == "cex"), None)
    return ([m.value for m in at.metric[:3]], table, radio)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_shared_link_reproduces_the_page(preset: str) -> None:
    at = explore_page()
    at.selectbox(key="preset_choice").set_value(preset).run()
    at.button(key="run-button").click().run()
    link = {key: at.query_params[key] for key in at.query_params}
    assert link["preset"] == preset and link["run"] == "1"
    fresh = explore_page(**link)
    assert fresh.selectbox(key="preset_choice").value == preset
    assert seen(fresh) == seen(at)
    assert f"the preset `{preset}`" in all_text(fresh)


def test_lease_only_link_is_not_the_default_design() -> None:
    """A lease-only link says receiver=none explicitly and opens at the reference bounds
    (4,765 states), P1-P3 violated."""
    at = explore_page(preset="lease-only", run="1")
    assert at.query_params["receiver"] == "none"
    assert at.metric[0].value == "4,765"
    row = verdict_cells(at, "verdict")
    assert all(row[p].startswith("✘") for p in ("P1", "P2", "P3"))


def test_a_stale_counterexample_in_the_link_is_replaced() -> None:
    """`cex=P1` for a design where P1 holds falls back to a violated property."""
    at = explore_page(preset="fencing", run="1", cex="P1")
    assert at.query_params["cex"] == "P2"


@pytest.mark.parametrize(
    "params",
    [
        {"budget": "1e400"},
        {"budget": "Infinity"},
        {"workers": "1e400"},
        {"lease": "-1e400"},
        {"skew": "[Log in again](https://evil.example)"},
        {"receiver": "![x](http://127.0.0.1:9/t.png)"},
        {"preset": "no-such", "run": "1"},
        {"horizon": "9" * 5000},
    ],
)
def test_hostile_links_give_a_message_never_a_traceback_or_markup(params: dict[str, str]) -> None:
    at = explore_page(**params)
    shown = " ".join(e.value for e in at.error)
    assert "partly not understood" in shown
    assert "](http" not in shown and "](https" not in shown


def test_the_page_shows_the_command_that_runs_the_same_search() -> None:
    import shlex

    from fencing.arguments import bounds_from_args, design_from_args
    from fencing.cli import build_parser
    from model.design import Bounds, Design

    at = explore_page(token="random", receiver="none", horizon="5")
    (line,) = [c.value for c in at.code if str(c.value).startswith("fencing check")]
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert design_from_args(args) == Design(token="random", receiver="none")
    shown = {name: int(at.number_input(key=name).value) for name in Bounds().to_dict()}
    assert bounds_from_args(args) == Bounds(**shown) and shown["horizon"] == 5
