"""A page's link, opened in a fresh browser (a new profile), reproduces the page: State space
and Proofs keep their design, bounds, property and switch in the URL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import WAIT_MS, ConsoleLog, screenshot, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture
def fresh(browser: Any) -> Iterator[Any]:
    """A brand-new browser context: no cookies, no storage, no Streamlit session."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


def _metrics(tab: Any) -> list[str]:
    """The values of the page's metric boxes, in order."""
    return [m.inner_text() for m in tab.get_by_test_id("stMetricValue").all()]


def test_a_state_space_link_opens_the_same_page_in_a_fresh_browser(
    app_url: str, page: tuple[Any, ConsoleLog], fresh: Any
) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/state-space?preset=fencing&prop=P1&horizon=3")
    tab.get_by_text("The state space").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_test_id("stMetricValue").nth(3).wait_for(timeout=WAIT_MS)
    seen, url = _metrics(tab), tab.url
    assert "preset=fencing" in url and "prop=P1" in url and "horizon=3" in url
    other = fresh.new_page()
    other.goto(url)
    other.get_by_text("The state space").wait_for(timeout=WAIT_MS)
    wait_idle(other)
    other.get_by_test_id("stMetricValue").nth(3).wait_for(timeout=WAIT_MS)
    assert len(seen) == 4 and _metrics(other) == seen
    assert other.get_by_text("P1 holds within these bounds").count() >= 1
    screenshot(other, "state-space-from-a-link")


def test_a_proofs_link_opens_the_same_results_in_a_fresh_browser(
    app_url: str, page: tuple[Any, ConsoleLog], fresh: Any
) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/proofs?preset=lease-only&run=1")
    tab.get_by_text("P1, monotonic acceptance: ✘ violated (8 steps)").first.wait_for(
        timeout=WAIT_MS
    )
    wait_idle(tab)
    other = fresh.new_page()
    other.goto(tab.url)
    other.get_by_text("P1, monotonic acceptance: ✘ violated (8 steps)").first.wait_for(
        timeout=WAIT_MS
    )
    wait_idle(other)
    for text in ("P4, no false rejection: ○ holds vacuously", "P2, no write outside its lease"):
        assert other.get_by_text(text).count() >= 1, text
    screenshot(other, "proofs-from-a-link")
