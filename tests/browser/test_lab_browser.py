"""Headless Chromium against `streamlit run`: a violation played by clicking, a *break it*
exercise solved, and the state graph page drawn. Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser.conftest import WAIT_MS, ConsoleLog, arrowheads, screenshot, wait_idle

pytestmark = pytest.mark.browser
PAUSED_WORKER_CLICKS = (
    "Acquire W1",
    "Send W1's write",
    "Tick (time passes)",
    "Tick (time passes)",
    "Deliver W1's write",
)


def click(tab: Any, label: str) -> None:
    """Click the button with exactly this label and wait for the rerun to finish."""
    tab.get_by_role("button", name=label, exact=True).first.click()
    wait_idle(tab)


def test_playing_a_violation_by_clicking(app_url: str, page: tuple[Any, ConsoleLog]) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/playground")
    tab.get_by_text("Be the scheduler").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    for label in PAUSED_WORKER_CLICKS:
        click(tab, label)
    tab.get_by_text("P2 violated at step 5").wait_for(timeout=WAIT_MS)
    assert parse_qs(urlparse(tab.url).query)["a"] == ["A1.S1.T.T.D1"]
    assert tab.get_by_text("P1 holds so far").count() == 1
    plot = tab.locator(".js-plotly-plot").first
    plot.wait_for(timeout=WAIT_MS)
    plot.get_by_text("after 5 of 5 steps").wait_for(timeout=WAIT_MS)  # redrawn for step 5
    assert arrowheads(plot) == 1  # one delivered write, one arrow
    screenshot(tab, "playground-p2-violation")


def test_solving_a_break_it_exercise(app_url: str, page: tuple[Any, ConsoleLog]) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/exercises")
    tab.get_by_text("From the paused worker to the lost update").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_test_id("stSelectbox").nth(1).click()
    tab.get_by_role("option", name="2. The paused worker: write after the lease").click()
    wait_idle(tab)
    tab.get_by_text("Violate P2", exact=True).wait_for(timeout=WAIT_MS)
    for label in PAUSED_WORKER_CLICKS:
        click(tab, label)
    click(tab, "Check my run")
    tab.get_by_text("Right: step 5 (Deliver(W1)) violates P2").wait_for(timeout=WAIT_MS)
    screenshot(tab, "exercise-break-it-solved")


def test_the_state_graph_page(app_url: str, page: tuple[Any, ConsoleLog]) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/state-space")
    tab.get_by_text("354 states, 186 up to renaming the workers").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    plots = tab.locator(".js-plotly-plot")
    plots.nth(1).wait_for(timeout=WAIT_MS)
    assert plots.count() == 2
    graph = plots.nth(1)
    graph.scroll_into_view_if_needed()
    assert graph.locator("g.trace.scatter").count() >= 3  # edges, path, nodes
    assert graph.locator("path.point").count() >= 354
    screenshot(tab, "state-space-lease-only")
