"""The app in headless Chromium: a chapter stepped to the end, a design explored, a shared URL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser.conftest import WAIT_MS, ConsoleLog, arrowheads, open_tab, screenshot, wait_idle
from webapp.show.chapters import chapter_traces

pytestmark = pytest.mark.browser


def test_chapter_stepped_to_the_end(app_url: str, page: tuple[Any, ConsoleLog]) -> None:
    tab, _ = page
    trace = chapter_traces(1)[0]
    count = len(trace.steps)
    tab.goto(f"{app_url}/chapter-1?step=0")
    tab.get_by_text(f"Step 0 of {count}").wait_for(timeout=WAIT_MS)
    tab.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
    for position in range(1, count + 1):
        tab.get_by_role("button", name=re.compile("Next")).click()
        tab.get_by_text(f"Step {position} of {count}").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    assert parse_qs(urlparse(tab.url).query)["step"] == [str(count)]
    assert tab.get_by_role("button", name=re.compile("Next")).is_disabled()
    assert tab.get_by_text(trace.steps[-1].sentence).count() >= 1
    assert tab.get_by_text(trace.steps[7].reasons[0].text).count() >= 1
    screenshot(tab, "chapter-1-end")


@pytest.fixture(scope="module")
def explored(app_url: str, context: Any) -> Iterator[dict[str, Any]]:
    """Explore key-version-token in the browser once; the URL and facts seen are shared."""
    tab, console = open_tab(context)
    tab.goto(f"{app_url}/explore")
    tab.get_by_text("Start from a preset").wait_for(timeout=WAIT_MS)
    tab.get_by_test_id("stSelectbox").first.click()
    tab.get_by_role("option", name="key-version-token").click()
    wait_idle(tab)
    tab.get_by_text("This is the preset").wait_for(timeout=WAIT_MS)
    tab.get_by_role("button", name="Run the explorer").click()
    tab.get_by_text("Counterexamples").wait_for(timeout=WAIT_MS)
    tab.get_by_text("P3, grant order (8 steps)").click()
    tab.get_by_text("P3 violated").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_role("button", name=re.compile("Last")).click()
    tab.get_by_text("Step 8 of 8").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    plot = tab.locator(".js-plotly-plot").first
    plot.wait_for(timeout=WAIT_MS)
    plot.scroll_into_view_if_needed()
    facts = {
        "url": tab.url,
        "arrows": arrowheads(plot),
        "preset_line": tab.get_by_text("This is the preset").first.inner_text(),
    }
    screenshot(tab, "explore-key-version-P3")
    tab.close()
    facts["errors"] = console.errors
    yield facts


def test_design_explored_and_counterexample_shown(explored: dict[str, Any]) -> None:
    assert explored["errors"] == []
    assert explored["arrows"] == 2  # two delivered writes, two arrows
    assert explored["preset_line"].startswith("This is the preset key-version-token")
    query = parse_qs(urlparse(explored["url"]).query)
    assert query["token"] == ["key-version"] and query["run"] == ["1"] and query["step"] == ["8"]
    assert query["cex"][0].startswith("P3")


def test_shared_url_reopens_the_same_state(
    explored: dict[str, Any], page: tuple[Any, ConsoleLog]
) -> None:
    tab, _ = page
    tab.goto(explored["url"])
    tab.get_by_text("Step 8 of 8").wait_for(timeout=WAIT_MS)
    tab.get_by_text("P3 violated").first.wait_for(timeout=WAIT_MS)
    assert tab.get_by_text("This is the preset").first.inner_text() == explored["preset_line"]
    assert tab.get_by_role("button", name=re.compile("Next")).is_disabled()
    plot = tab.locator(".js-plotly-plot").first
    plot.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    assert arrowheads(plot) == explored["arrows"]
    screenshot(tab, "explore-shared-url")
