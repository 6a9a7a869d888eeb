"""What a person sees, in headless Chromium at a desktop's 1400 px and a phone's 390 px:
chapter 1's two runs side by side under one stepper, opened on the step that matters;
chapter 0's three runs in tabs under one stepper, each as wide as chapter 1's, its words
never overlapping, its legends whole; captions readable; Home's links whole on a phone;
Compare's matrix fitting a phone. Screenshots of each go to test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.browser.conftest import ARTIFACTS, WAIT_MS, open_tab, wait_idle
from webapp.screens.chapter_page import TAB_PARAM
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


PAGE_STYLE_IN_EFFECT = """() => [...document.querySelectorAll('style')]
    .some(s => s.textContent.includes('stCaptionContainer'))"""
"""True once the page's own style sheet is in the document: the app adds it at the start of
every run, and a caption drawn a moment before it arrives shows Streamlit's own styling."""


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
    tab.wait_for_function(PAGE_STYLE_IN_EFFECT, timeout=WAIT_MS)
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


LAPTOP = {"width": 1280, "height": 900}
WORDS_JS = """plot => {
  const words = [];
  const texts = 'g.textpoint text, .g-gtitle text, .xtick text, .ytick text, .g-xtitle text';
  plot.querySelectorAll(texts).forEach(e => {
      const r = e.getBoundingClientRect();
      if (e.textContent.trim() && r.width > 0) words.push([e.textContent.trim(), r]);
    });
  const marks = [];
  plot.querySelectorAll('.cartesianlayer g.trace.scatter').forEach(g => {
    const name = g.__data__?.[0]?.trace?.name ?? '';
    if (name === 'current step' || name === 'in flight' || name.endsWith(' arrows')) return;
    g.querySelectorAll('g.points path.point').forEach(e => {
      const r = e.getBoundingClientRect();
      if (r.width > 2 && r.height > 2) marks.push(r);
    });
  });
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const found = [];
  words.forEach(([t, a], i) => words.slice(i + 1).forEach(([u, b]) => {
    if (meet(a, b)) found.push(t + ' / ' + u);
  }));
  words.forEach(([t, a]) => marks.forEach(m => {
    if (meet(a, m)) found.push(t + ' / a mark');
  }));
  const legend = plot.querySelector('.legend .scrollbar');
  return {overlaps: found, legendScrolls: !!legend && legend.getBoundingClientRect().height > 0};
}"""
"""Every pair of words of a timeline (labels, title, axes) that overlap, and every label that
covers a mark (the current step's ring, a request's head and its arrows aside); and whether
the legend became a scroll box."""


@pytest.fixture(params=[LAPTOP, PHONE], ids=["1280", "390"])
def laptop_or_phone(request: Any, browser: Any) -> Iterator[tuple[Any, str]]:
    """A tab at a 1280 px laptop's or a 390 px phone's width."""
    context = browser.new_context(viewport=request.param)
    tab, console = open_tab(context)
    yield tab, str(request.param["width"])
    context.close()
    assert console.errors == [], console.errors


def _plot_width(tab: Any, url: str) -> float:
    """The width of the first timeline of a page."""
    _open(tab, url)
    plot = tab.locator(".js-plotly-plot").first
    plot.wait_for(timeout=WAIT_MS)
    return float(plot.bounding_box()["width"])


def test_chapter_0_gives_each_run_a_readable_width_and_its_words_room(
    app_url: str, laptop_or_phone: tuple[Any, str]
) -> None:
    """Each of chapter 0's runs gets a tab under the one stepper, at least as wide as one of
    chapter 1's runs; at the opening, a middle and the last step no two words of its figure
    overlap, no label covers a mark, the legend does not scroll, and every tab is in view."""
    tab, width = laptop_or_phone
    chapter_1 = _plot_width(tab, f"{app_url}/chapter-1")
    specs = BY_NUMBER[0].runs[0].shown()
    traces = choice_traces(0, 0)
    last = max(len(t.steps) for t in traces)
    for spec in specs:
        for step in (opening_step(traces), last // 2, last):
            query = urlencode({TAB_PARAM: spec.tab, "step": step})
            _open(tab, f"{app_url}/chapter-0?{query}")
            tab.get_by_text(f"Step {step} of {last}", exact=True).wait_for(timeout=WAIT_MS)
            plots = tab.locator(".js-plotly-plot")
            plots.first.wait_for(timeout=WAIT_MS)
            assert plots.count() == 1  # one run at a time, the open tab's
            box = plots.first.bounding_box()
            assert box["width"] >= chapter_1 - 1
            found = plots.first.evaluate(WORDS_JS)
            assert found["overlaps"] == [], (spec.label, step, found["overlaps"])
            assert not found["legendScrolls"], (spec.label, step)
        tabs = tab.get_by_role("tab")
        assert tabs.count() == len(specs)
        for index in range(len(specs)):
            right = tabs.nth(index).bounding_box()
            assert right["x"] + right["width"] <= tab.viewport_size["width"]
        selected = tab.get_by_role("tab", name=spec.tab, exact=True)
        assert selected.get_attribute("aria-selected") == "true"
        name = re.sub(r"\W+", "-", spec.tab)
        _full_screenshot(tab, f"layout-chapter-0-{name}-{width}")
