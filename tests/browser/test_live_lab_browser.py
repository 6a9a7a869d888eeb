"""The Live lab page in headless Chromium: a scripted scenario run on the server's own etcd,
its real history and the model's replay drawn, and the replay opened in Be the scheduler.
Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import WAIT_MS, ConsoleLog, screenshot, wait_idle
from webapp.show.looks import PAUSED, outcome_look
from webapp.show.style import REJECTED, VIOLATING

pytestmark = pytest.mark.browser
RUN_MS = 90_000
"""A lab run starts etcd on first use, then processes: allow more than a page load."""

TRACE_NAMES_JS = """plot => Array.from(plot.querySelectorAll('g.trace.scatter'))
    .map(g => g.__data__?.[0]?.trace?.name ?? '')"""


def test_the_paused_worker_runs_live_and_opens_in_the_scheduler(
    app_url: str, page: tuple[Any, ConsoleLog]
) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/lab")
    tab.get_by_text("Live lab").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_text("The model's prediction").wait_for(timeout=WAIT_MS)
    tab.get_by_role("button", name="Run", exact=True).click()
    tab.get_by_text("Reality agreed with the model's prediction.").wait_for(timeout=RUN_MS)
    tab.get_by_text("The model allows this history.").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    plots = tab.locator(".js-plotly-plot")
    plots.nth(1).wait_for(timeout=WAIT_MS)
    assert plots.count() == 2  # the real history, the model's run of it
    names = plots.nth(0).evaluate(TRACE_NAMES_JS)
    assert PAUSED.name in names and outcome_look(REJECTED).name not in names
    assert outcome_look(VIOLATING).name in names  # the paused worker's late write
    assert tab.get_by_text("✘ 1 violation").count() >= 3  # P1, P2, P3 in the history table
    screenshot(tab, "live-lab-paused-worker")
    tab.get_by_role("link", name="Step it yourself in the scheduler").click()
    tab.get_by_text("Be the scheduler").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_text("P1 violated at step").wait_for(timeout=WAIT_MS)
    screenshot(tab, "live-lab-in-the-scheduler")


def test_a_randomized_comparison_in_the_browser(app_url: str, page: tuple[Any, ConsoleLog]) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/lab")
    tab.get_by_text("Live lab").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_text("A randomized run").click()
    wait_idle(tab)
    seconds = tab.get_by_label("Seconds per design")
    seconds.fill("2")
    seconds.press("Enter")
    wait_idle(tab)
    chooser = tab.get_by_test_id("stMultiSelect").locator("input")
    chooser.click()
    chooser.press("Backspace")  # drops the last receiver, etcd-txn
    tab.keyboard.press("Escape")
    wait_idle(tab)
    tab.get_by_role("button", name="Run", exact=True).click()
    tab.get_by_text("Side by side", exact=True).wait_for(timeout=RUN_MS)
    wait_idle(tab)
    assert tab.get_by_text("random: receiver fenced, token create-revision").count() == 1
    assert tab.get_by_text("random: receiver etcd-txn, token create-revision").count() == 0
    history = tab.locator(".js-plotly-plot").first
    history.wait_for(timeout=WAIT_MS)
    names = history.evaluate(TRACE_NAMES_JS)
    assert PAUSED.name in names
    screenshot(tab, "live-lab-randomized")
