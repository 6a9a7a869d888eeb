"""*Be the scheduler* in headless Chromium at a desktop's 1400 px and a phone's 390 px: the
timeline sits beside the moves on a desktop and right under them on a phone, and the share
box holds a full link that reopens the run. Screenshots go to test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS, WAIT_MS, open_tab, wait_idle

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}
PHONE_GAP_PX = 120
"""On a phone, at most this much space between the last move button and the timeline."""


@pytest.fixture(params=[DESKTOP, PHONE], ids=["desktop", "phone"])
def sized(request: Any, browser: Any) -> Iterator[tuple[Any, str]]:
    """A tab at a desktop's or a phone's size, and the size's name for screenshots."""
    context = browser.new_context(viewport=request.param)
    tab, console = open_tab(context)
    yield tab, "desktop" if request.param is DESKTOP else "phone"
    context.close()
    assert console.errors == [], console.errors


def _box(locator: Any) -> dict[str, float]:
    """Where an element is drawn (the tab is as tall as the page, so nothing scrolls)."""
    box = locator.bounding_box()
    assert box is not None
    return dict(box)


def _whole_page(tab: Any) -> None:
    """Make the tab as tall as the page, so every element is measured where it is drawn."""
    height = tab.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    width = tab.viewport_size["width"]
    tab.set_viewport_size({"width": width, "height": min(int(height) + 100, 7000)})
    tab.wait_for_timeout(500)


def test_the_timeline_is_next_to_the_moves_and_the_link_is_whole(
    app_url: str, sized: tuple[Any, str]
) -> None:
    tab, size = sized
    tab.goto(f"{app_url}/playground?d=lease-only&a=A1.S1.T")
    tab.get_by_text("Your move").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    plot = tab.locator(".js-plotly-plot").first
    plot.wait_for(timeout=WAIT_MS)
    _whole_page(tab)
    finish = _box(tab.get_by_role("button", name="Finish with the shortest violation from here"))
    timeline = _box(plot)
    if size == "desktop":
        assert timeline["x"] > finish["x"] + finish["width"]  # beside the moves
        assert timeline["y"] < finish["y"] + finish["height"]
    else:
        gap = timeline["y"] - (finish["y"] + finish["height"])
        assert 0 <= gap <= PHONE_GAP_PX, gap
    link = tab.locator("[data-testid='stCode']").last.inner_text().strip()
    assert link.startswith(f"{app_url}/playground?d=lease-only&b="), link
    assert link.endswith("&a=A1.S1.T"), link
    tab.screenshot(path=str(ARTIFACTS / f"scheduler-{size}.png"))
    tab.goto(link)
    tab.get_by_text("Your move").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    assert tab.get_by_text("(step 4)").count() >= 1
