"""Keepalives and crashes in headless Chromium: on *Be the scheduler* the holder renews, is
paused and loses its lease anyway, and the next holder crashes, its lane ended; chapter 0
steps its three runs to the end and shows the table to take away. Screenshots go to
test-artifacts/."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.conftest import WAIT_MS, ConsoleLog, screenshot, wait_idle
from webapp.show.chapters import BY_NUMBER, chapter_traces
from webapp.show.looks import CRASHED
from webapp.show.views import opening_step

pytestmark = pytest.mark.browser

LANE_JS = """(plot, name) => plot.data
    .filter(t => t.name === name && t.showlegend === false).map(t => Array.from(t.x))"""
"""The x values of the live figure's drawn traces (not legend entries) with this name."""


def _click(tab: Any, label: str) -> None:
    """Press one of the scheduler's move buttons and wait for the board to redraw."""
    tab.get_by_role("button", name=label, exact=True).click()
    wait_idle(tab)


def _xs(tab: Any, name: str) -> list[list[float | None]]:
    """The x values of the timeline's traces named `name`."""
    plot = tab.locator(".js-plotly-plot").first
    plot.wait_for(timeout=WAIT_MS)
    return list(plot.evaluate(LANE_JS, name))


def test_renew_pause_and_crash_on_the_scheduler(app_url: str, page: tuple[Any, ConsoleLog]) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/playground?d=keepalive-lease")
    tab.get_by_text("Your move").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    _click(tab, "Acquire W1")
    _click(tab, "Tick (time passes)")
    assert _xs(tab, "W1 lease")[0][:2] == [0, 2]
    _click(tab, "Renew W1's lease")
    tab.get_by_text(re.compile("now runs until t=3")).first.wait_for(timeout=WAIT_MS)
    assert _xs(tab, "W1 lease")[0][:2] == [0, 3]  # the bar extends at the renewal
    _click(tab, "Tick (time passes)")
    _click(tab, "Tick (time passes)")  # W1 is paused: it renews nothing
    tab.get_by_text(re.compile("W1's lease expires now")).first.wait_for(timeout=WAIT_MS)
    assert _xs(tab, "paused")  # the pause is drawn on W1's lane
    _click(tab, "Acquire W2")
    _click(tab, "Crash W2")
    tab.get_by_text(re.compile("W2 crashes at t=3")).first.wait_for(timeout=WAIT_MS)
    _click(tab, "Tick (time passes)")
    _click(tab, "Tick (time passes)")
    tab.get_by_text(re.compile("W2's lease expires now")).first.wait_for(timeout=WAIT_MS)
    (crashed,) = _xs(tab, CRASHED.name)
    assert crashed[0] is not None and crashed[1] is not None and crashed[1] > crashed[0]
    assert tab.get_by_text("✔ P6 holds so far (lock freed after a crash)").count() == 1
    assert "a=A1.T.N1.T.T.A2.K2.T.T" in tab.url
    tab.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    screenshot(tab, "scheduler-keepalive-crash")


def test_chapter_0_steps_three_runs_and_ends_with_the_table(
    app_url: str, page: tuple[Any, ConsoleLog]
) -> None:
    tab, _ = page
    traces = chapter_traces(0)
    count = max(len(t.steps) for t in traces)
    tab.goto(f"{app_url}/chapter-0")
    start = opening_step(traces)  # the runs open on the step that matters
    tab.get_by_text(f"Step {start} of {count}", exact=True).wait_for(timeout=WAIT_MS)
    tab.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    assert tab.locator(".js-plotly-plot").count() == 1  # one run at a time, in its tab
    tab.get_by_role("button", name=re.compile("Last")).click()
    tab.get_by_text(f"Step {count} of {count}", exact=True).wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    for spec, trace in zip(BY_NUMBER[0].all_runs, traces, strict=True):
        tab.get_by_role("tab", name=spec.tab, exact=True).click()
        wait_idle(tab)
        tab.get_by_text(trace.steps[-1].sentence).first.wait_for(timeout=WAIT_MS)
        assert tab.get_by_text(f"Step {count} of {count}", exact=True).count() == 1
        assert tab.locator(".js-plotly-plot").count() == 1
    tab.get_by_role("tab", name=BY_NUMBER[0].all_runs[0].tab, exact=True).click()
    wait_idle(tab)
    tab.get_by_text("The table to take away").wait_for(timeout=WAIT_MS)
    assert tab.get_by_text(BY_NUMBER[0].takeaway).count() == 1
    assert tab.get_by_text("✘ the crashed holder keeps the lock: P6 fails (5 steps)").count() == 1
    assert len(_xs(tab, CRASHED.name)) == 1
    screenshot(tab, "chapter-0-end")
