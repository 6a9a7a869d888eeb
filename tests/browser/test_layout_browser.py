"""What a person sees, in headless Chromium at a desktop's 1400 px and a phone's 390 px:
chapter 1's two runs side by side under one stepper, opened on the step that matters;
captions readable; Home's links whole on a phone; Compare's matrix fitting a phone.
Screenshots of each go to test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS, WAIT_MS, open_tab, wait_idle
from webapp.screens.compare_page import DESIGN_PX, VERDICT_PX
from webapp.show.chapters import BY_NUMBER, choice_traces
from webapp.show.navigation import PAGES
from webapp.show.style import MIN_CONTRAST, PAGE_BACKGROUND, blend, contrast_ratio
from webapp.show.views import opening_step

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(params=[DESKTOP, PHONE], ids=["desktop", "phone"])
def sized(request: Any, browser: Any) -> Iterator[tuple[Any, str]]:
    """A tab at a desktop's or a phone's size, and the size's name for screenshots."""
    context = browser.new_context(viewport=request.param)
    tab, console = open_tab(context)
    yield tab, "desktop" if request.param is DESKTOP else "phone"
    context.close()
    assert console.errors == [], console.errors


def _open(tab: Any, url: str) -> None:
    """Open a page and wait until Streamlit has drawn it."""
    tab.goto(url)
    tab.locator("[data-testid='stMain'] h1").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.wait_for_timeout(500)


def _full_screenshot(tab: Any, name: str) -> None:
    """The whole page at the tab's width, in test-artifacts/."""
    width = tab.viewport_size["width"]
    height = tab.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    tab.set_viewport_size({"width": width, "height": min(int(height) + 100, 7000)})
    tab.wait_for_timeout(500)
    tab.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _rgb(css: str) -> str:
    """`rgb(47, 45, 43)` as `#2f2d2b`."""
    numbers = [int(float(n)) for n in re.findall(r"[\d.]+", css)[:3]]
    return "#" + "".join(f"{n:02x}" for n in numbers)


def test_chapter_1_shows_both_runs_together_on_the_step_that_matters(
    app_url: str, sized: tuple[Any, str]
) -> None:
    tab, size = sized
    traces = choice_traces(1, 0)
    start, count = opening_step(traces), max(len(t.steps) for t in traces)
    _open(tab, f"{app_url}/chapter-1")
    tab.get_by_text(f"Step {start} of {count}", exact=True).wait_for(timeout=WAIT_MS)
    plots = tab.locator(".js-plotly-plot")
    plots.nth(1).wait_for(timeout=WAIT_MS)
    first, second = plots.nth(0).bounding_box(), plots.nth(1).bounding_box()
    if size == "desktop":  # side by side: the same height on the page, one beside the other
        assert abs(first["y"] - second["y"]) < 5
        assert first["x"] + first["width"] <= second["x"]
        assert second["y"] + second["height"] <= DESKTOP["height"] + 400
    else:  # a phone stacks them, each as wide as the screen allows
        assert first["y"] + first["height"] <= second["y"]
        assert first["width"] >= 300
    assert tab.evaluate("() => document.documentElement.scrollWidth") <= tab.viewport_size["width"]
    for spec in BY_NUMBER[1].runs[0].shown():
        assert tab.get_by_role("heading", name=spec.label, exact=True).count() == 1
    _full_screenshot(tab, f"layout-chapter-1-{size}")


def test_captions_reach_the_contrast_of_body_text(app_url: str, sized: tuple[Any, str]) -> None:
    """Read the caption's colour and opacity as the browser applies them, and compute."""
    tab, _ = sized
    _open(tab, f"{app_url}/chapter-1")
    caption = tab.get_by_test_id("stCaptionContainer").first
    caption.wait_for(timeout=WAIT_MS)
    style = caption.evaluate("c => { const s = getComputedStyle(c); return [s.color, s.opacity]; }")
    shown = blend(_rgb(style[0]), PAGE_BACKGROUND, float(style[1]))
    assert contrast_ratio(shown, PAGE_BACKGROUND) >= MIN_CONTRAST


def test_home_shows_every_link_whole(app_url: str, sized: tuple[Any, str]) -> None:
    tab, size = sized
    _open(tab, f"{app_url}/")
    links = tab.get_by_test_id("stPageLink")
    links.nth(len(PAGES) - 2).wait_for(timeout=WAIT_MS)
    assert links.count() == len(PAGES) - 1
    cut = links.evaluate_all(
        """links => links.flatMap(l => Array.from(l.querySelectorAll('span, p')))
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""
    )
    assert cut == []
    for entry in PAGES[1:]:
        assert links.filter(has_text=entry.purpose).count() == 1
    _full_screenshot(tab, f"layout-home-{size}")


def test_compare_matrix_shows_every_verdict_column(app_url: str, sized: tuple[Any, str]) -> None:
    """The design and the five verdict columns fit the frame, even on a phone (the
    mirrors column scrolls)."""
    tab, size = sized
    _open(tab, f"{app_url}/compare")
    frame = tab.get_by_test_id("stDataFrame").first
    frame.wait_for(timeout=WAIT_MS)
    assert frame.bounding_box()["width"] >= DESIGN_PX + 5 * VERDICT_PX
    assert tab.evaluate("() => document.documentElement.scrollWidth") <= tab.viewport_size["width"]
    _full_screenshot(tab, f"layout-compare-{size}")
