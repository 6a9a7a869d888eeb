"""The step player and its timeline in headless Chromium: one stepper drives the figure, the
narration and the state table; Play advances and starts again at the end; the gap is on the
figure in chapter 3; a 390-px phone shows the legend below the plot. Screenshots go to
test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser.conftest import ARTIFACTS, WAIT_MS, ConsoleLog, open_tab, screenshot, wait_idle
from webapp.show.chapters import BY_NUMBER, build_run
from webapp.show.events import gaps, step_positions
from webapp.show.style import GAP_FILL
from webapp.show.trace_swimlane import GAP_LABEL
from webapp.show.views import actor_rows

pytestmark = pytest.mark.browser

CHAPTER = 3
PHONE = {"width": 390, "height": 844}
FIGURE_JS = """(plot, gapFill) => ({
    subtitle: plot.layout.title.subtitle.text,
    ring: (plot.data.find(t => t.name === 'current step' && t.showlegend === false) || {x: []}).x,
    gaps: (plot.layout.shapes || []).filter(s => s.fillcolor === gapFill).map(s => [s.x0, s.x1]),
    lanes: Array.from(plot.querySelectorAll('.ytick text')).map(t => t.textContent),
    ticks: Array.from(plot.querySelectorAll('.xtick text')).map(t => t.textContent),
})"""
"""What the timeline shows, read from the live plotly figure."""
LEGEND_PLACES_JS = """entries => entries.map(e => {
    const m = /translate\\(([-\\d.]+),\\s*([-\\d.]+)\\)/.exec(e.getAttribute('transform'));
    return [Number(m[1]), Number(m[2])];
})"""
"""Where plotly placed each legend entry (x, y within the legend)."""


@pytest.fixture(scope="module")
def trace() -> Any:
    """Chapter 3's first run, replayed: the stale write that lands in the gap."""
    return build_run(BY_NUMBER[CHAPTER].runs[0])


def _figure(tab: Any) -> dict[str, Any]:
    """The first timeline's subtitle, current-step ring, gap shading, lanes and tick labels."""
    plot = tab.locator(".js-plotly-plot").first
    plot.wait_for(timeout=WAIT_MS)
    drawn = "p => p.layout !== undefined && p.data !== undefined"  # not mid-redraw
    tab.wait_for_function(drawn, arg=plot.element_handle(), timeout=WAIT_MS)
    return dict(plot.evaluate(FIGURE_JS, GAP_FILL))


def _position(tab: Any) -> int:
    """The step the page says it shows, read from `Step k of N`."""
    text = tab.get_by_text(re.compile(r"^Step \d+ of \d+$")).first.inner_text()
    return int(text.split()[1])


def _state_table(tab: Any) -> str:
    """The text of the first state table on the page."""
    return str(tab.get_by_test_id("stTable").first.inner_text())


def _current_line(tab: Any) -> str:
    """The highlighted (current) narration line, or '' before the first step."""
    marked = tab.get_by_text(re.compile(r"^▶ "))
    return str(marked.first.inner_text()) if marked.count() else ""


def _assert_shows(tab: Any, trace: Any, position: int) -> None:
    """Figure, narration, state table and URL all show `position`."""
    count = len(trace.steps)
    tab.get_by_text(f"Step {position} of {count}", exact=True).wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    figure = _figure(tab)
    if position:
        assert f"after {position} of {count} steps · now t=" in figure["subtitle"]
        assert figure["ring"] == [pytest.approx(step_positions(trace)[position - 1])]
        assert trace.steps[position - 1].sentence in _current_line(tab)
    else:
        assert "before the first step" in figure["subtitle"] and figure["ring"] == []
        assert _current_line(tab) == ""
    table = _state_table(tab)
    for row in actor_rows(trace, position):
        assert row.words.split(";")[0] in table
    assert parse_qs(urlparse(tab.url).query).get("step", ["0"]) == [str(position)]


def test_one_stepper_drives_figure_narration_and_table(
    app_url: str, page: tuple[Any, ConsoleLog], trace: Any
) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/chapter-{CHAPTER}?step=0")
    _assert_shows(tab, trace, 0)
    figure = _figure(tab)  # the first frame: lanes and the time axis, not an empty chart
    assert figure["lanes"] == ["coordinator", "W1", "W2", "receiver", "clock"]
    assert figure["ticks"] == ["t=0", "t=1", "t=2"]
    screenshot(tab, "timeline-step-0")
    for position in range(1, 6):
        tab.get_by_role("button", name=re.compile("Next")).click()
        _assert_shows(tab, trace, position)
    screenshot(tab, "timeline-step-5")
    tab.get_by_role("button", name=re.compile("Back")).click()
    _assert_shows(tab, trace, 4)
    tab.get_by_role("button", name=re.compile("Last")).click()
    _assert_shows(tab, trace, len(trace.steps))
    tab.get_by_role("button", name=re.compile("First")).click()
    _assert_shows(tab, trace, 0)


def test_play_advances_stops_at_the_end_and_starts_again(
    app_url: str, page: tuple[Any, ConsoleLog], trace: Any
) -> None:
    tab, _ = page
    count = len(trace.steps)
    tab.goto(f"{app_url}/chapter-{CHAPTER}?step={count - 2}")
    _assert_shows(tab, trace, count - 2)
    tab.get_by_role("button", name=re.compile("Play")).click()
    tab.get_by_role("button", name=re.compile("Pause")).wait_for(timeout=WAIT_MS)
    tab.get_by_text(f"Step {count} of {count}", exact=True).wait_for(timeout=WAIT_MS)
    tab.get_by_role("button", name=re.compile("Play")).wait_for(timeout=WAIT_MS)  # stopped
    tab.wait_for_timeout(2500)
    _assert_shows(tab, trace, count)  # and stays at the end
    tab.get_by_role("button", name=re.compile("Play")).click()  # at the end: from step 0 again
    tab.get_by_text(f"Step 0 of {count}", exact=True).wait_for(timeout=WAIT_MS)
    tab.get_by_text(f"Step 2 of {count}", exact=True).wait_for(timeout=WAIT_MS)
    screenshot(tab, "timeline-playing")
    tab.get_by_role("button", name=re.compile("Pause")).click()
    tab.get_by_role("button", name=re.compile("Play")).wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    paused_at = _position(tab)
    assert 2 <= paused_at < count
    tab.wait_for_timeout(2500)
    _assert_shows(tab, trace, paused_at)  # Pause holds the step, with all three views on it


def test_the_gap_is_on_the_figure_in_chapter_3(
    app_url: str, page: tuple[Any, ConsoleLog], trace: Any
) -> None:
    tab, _ = page
    (gap,) = gaps(trace)
    tab.goto(f"{app_url}/chapter-{CHAPTER}?step={len(trace.steps)}")
    _assert_shows(tab, trace, len(trace.steps))
    figure = _figure(tab)
    assert figure["gaps"] == [[pytest.approx(gap.start), pytest.approx(gap.end)]]
    plot = tab.locator(".js-plotly-plot").first
    label = plot.locator("text", has_text="gap: old lease over")
    assert label.count() == 1
    assert "the receiver would still take its token" in label.first.text_content()
    assert GAP_LABEL.startswith("gap: old lease over")
    assert plot.locator(".legendtext", has_text=re.compile("^gap$")).count() == 1
    plot.scroll_into_view_if_needed()
    plot.screenshot(path=str(ARTIFACTS / "timeline-chapter-3-gap.png"))
    screenshot(tab, "timeline-chapter-3-gap-page")


@pytest.fixture
def phone(browser: Any) -> Iterator[tuple[Any, ConsoleLog]]:
    """A tab in a 390 x 844 phone-sized window; fails the test on any console error."""
    context = browser.new_context(viewport=PHONE)
    tab, console = open_tab(context)
    yield tab, console
    context.close()
    assert console.errors == [], console.errors


def _box(locator: Any) -> dict[str, float]:
    """A visible element's box on the page."""
    box = locator.bounding_box()
    assert box is not None
    return dict(box)


def test_phone_layout_keeps_the_legend_and_controls_off_the_plot(
    app_url: str, phone: tuple[Any, ConsoleLog], trace: Any
) -> None:
    tab, _ = phone
    tab.goto(f"{app_url}/chapter-{CHAPTER}?step=6")
    _assert_shows(tab, trace, 6)
    plot = tab.locator(".js-plotly-plot").first
    plot.scroll_into_view_if_needed()
    area = _box(plot.locator(".nsewdrag").first)  # the plotting area
    axis_title = _box(plot.locator(".xtitle").first)
    legend = _box(plot.locator(".legend").first)
    figure = _box(plot)
    assert area["width"] >= 200  # the lanes keep most of the phone's width
    assert axis_title["y"] >= area["y"] + area["height"]
    assert legend["y"] >= axis_title["y"] + axis_title["height"]  # below the axis title
    assert legend["y"] + legend["height"] <= figure["y"] + figure["height"] + 1
    assert legend["x"] + legend["width"] <= figure["x"] + figure["width"] + 1
    for name in ("First", "Back", "Play", "Next", "Last"):
        button = _box(tab.get_by_role("button", name=re.compile(name)).first)
        assert button["y"] + button["height"] <= figure["y"]  # controls above the figure
    places = plot.locator(".legend .traces").evaluate_all(LEGEND_PLACES_JS)
    rows = {round(y) for _, y in places}
    assert len(places) >= 8 and len(rows) <= (len(places) + 1) // 2  # two entries to a row
    tab.screenshot(path=str(ARTIFACTS / "timeline-phone-viewport.png"))
    plot.screenshot(path=str(ARTIFACTS / "timeline-phone-figure.png"))
