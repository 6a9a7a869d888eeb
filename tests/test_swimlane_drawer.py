"""The one swimlane drawer's geometry, checked on the facts it is given: requests travel
below their sender and drop to where they were decided, lease words sit inside their bar,
the tick bands alternate, "now" is a line only while stepping, a run's height never changes
between steps, and a real history's marks carry their worker's colour."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import plotly.graph_objects as go
import pytest

from fencing.stories import paused_worker_story
from lab.history import History
from lab.report import analyse
from model.formats.trace import Trace
from model.presets import PRESETS
from tests.lab.histories import nemesis, paused_worker, storage_start
from tests.test_timeline import _runs, _stale_after_expiry
from webapp.draw.label_rows import CENTRE, Wanted
from webapp.draw.swimlane import (
    NETWORK_OFFSET,
    history_figure,
    swimlane_figure,
    timeline_figure,
)
from webapp.show.lab_history import history_facts, last_time
from webapp.show.looks import CRASHED, GRANT, SEND, STORE_STARTED, outcome_look
from webapp.show.style import BAND_FILL, CURRENT_STEP_COLOUR, FUTURE_FILL, OUTCOMES, actor_colour
from webapp.show.swimlane import CRASH_BAR, LEASE_KINDS, Swimlane
from webapp.show.trace_swimlane import trace_facts


def _traces(figure: go.Figure, suffix: str) -> list[Any]:
    return [t for t in figure.data if t.name.endswith(suffix)]


def _requests_drawn(facts: Swimlane) -> tuple[list[list[float]], list[list[float]]]:
    """The y values of every network path and of every drop arrow, one list per request."""
    figure = swimlane_figure(facts)
    paths = [run for t in _traces(figure, " in the network") if t.x for run in _runs(t.y)]
    drops = [run for t in _traces(figure, " arrows") for run in _runs(t.y)]
    return paths, drops


@pytest.mark.parametrize(
    "facts",
    [
        trace_facts(paused_worker_story("fenced").trace()),
        history_facts(analyse(paused_worker("none", "accepted"))),
    ],
    ids=["model run", "lab history"],
)
def test_a_request_travels_below_its_sender_and_drops_where_it_was_decided(
    facts: Swimlane,
) -> None:
    lane_y = facts.lane_y()
    paths, drops = _requests_drawn(facts)
    assert len(paths) == len(facts.requests)
    for path in paths:
        sender = path[0]
        assert sender in lane_y.values()
        assert path[1:] == [sender - NETWORK_OFFSET] * 2  # down into the network, then along
    decided = [r for r in facts.requests if r.outcome is not None]
    assert len(drops) == len(decided) > 0
    expected = sorted((lane_y[r.lane] - NETWORK_OFFSET, lane_y[r.to_lane]) for r in decided)
    assert sorted((top, bottom) for top, bottom in drops) == expected


def test_lease_words_sit_inside_their_bar_or_just_above_its_start() -> None:
    """A lease's words go inside its bar from its start when nothing is drawn there, else
    on a row just above its start; each bar's words are drawn once."""
    facts = trace_facts(_stale_after_expiry())
    figure = swimlane_figure(facts)
    lane_y = facts.lane_y()
    bars = [bar for bar in facts.bars if bar.kind in LEASE_KINDS]
    inside = next(t for t in figure.data if t.name == "lease labels")
    above = next((t for t in figure.data if t.name == "lease labels above"), None)
    drawn = [*inside.text, *(above.text if above else ())]
    assert sorted(drawn) == sorted(bar.label for bar in bars)
    by_label = {bar.label: bar for bar in bars}
    for x, y, text in zip(inside.x, inside.y, inside.text, strict=True):
        bar = by_label[text]
        assert bar.start < x < min(bar.end, bar.start + 0.5) and y == lane_y[bar.lane]
    for x, y, text in zip(*(above.x, above.y, above.text) if above else ((), (), ()), strict=True):
        bar = by_label[text]
        assert x == bar.start and lane_y[bar.lane] < y < lane_y[bar.lane] + 1


def test_no_two_words_share_a_stretch_of_a_row() -> None:
    """However crowded a run, the words placed on one row of one lane never overlap at the
    narrowest width the app draws (the browser test measures the drawn ones)."""
    from webapp.draw.label_rows import Rows, span
    from webapp.draw.swimlane import lay_out_words

    for trace in (_stale_after_expiry(), paused_worker_story("fenced").trace()):
        for upto in range(len(trace.steps) + 1):
            facts = trace_facts(trace, upto)
            words = lay_out_words(facts, facts.lane_y())
            rows = Rows.empty(2, facts.axis.right - facts.axis.left)
            seen: dict[tuple[str, float], list[tuple[float, float]]] = {}
            for (g, m), (x, y, text, _) in words.marks.items():
                mark = facts.groups[g].marks[m]
                assert (x, text) == (mark.x, mark.label)
                wanted = Wanted(mark.lane, x, text, CENTRE, False, 0)
                low, high = span(wanted, rows.x_per_px)
                row = seen.setdefault((mark.lane, round(y, 6)), [])
                assert all(high <= a or low >= b for a, b in row), (upto, text)
                row.append((low, high))


def _shapes(figure: go.Figure, fill: str) -> list[Any]:
    return [s for s in figure.layout.shapes if s.fillcolor == fill]


def test_every_other_tick_is_a_shaded_band_and_every_tick_starts_with_a_line() -> None:
    trace = _stale_after_expiry()
    facts = trace_facts(trace)
    figure = swimlane_figure(facts)
    ticks = range(int(facts.axis.left), int(facts.axis.right))
    assert sorted(s.x0 for s in _shapes(figure, BAND_FILL)) == [t for t in ticks if t % 2]
    lines = [s.x0 for s in figure.layout.shapes if s.type == "line" and s.layer == "below"]
    assert lines == [float(t) for t in ticks]
    real = history_figure(analyse(paused_worker("none", "accepted")))
    assert _shapes(real, BAND_FILL) == [] and real.layout.xaxis.showgrid  # seconds: a grid


def test_now_is_a_line_and_a_veil_only_while_stepping() -> None:
    trace = paused_worker_story("none").trace()
    whole = timeline_figure(trace)
    assert _shapes(whole, FUTURE_FILL) == []
    assert not [s for s in whole.layout.shapes if s.line.color == CURRENT_STEP_COLOUR]
    for upto in (1, 4, len(trace.steps)):
        facts = trace_facts(trace, upto)
        figure = swimlane_figure(facts)
        (veil,) = _shapes(figure, FUTURE_FILL)
        assert (veil.x0, veil.x1) == (facts.now, facts.axis.right)
        (line,) = [s for s in figure.layout.shapes if s.line.color == CURRENT_STEP_COLOUR]
        assert line.x0 == line.x1 == facts.now and line.line.dash == "dash"


def _heights(trace: Trace) -> set[int]:
    return {timeline_figure(trace, upto).layout.height for upto in range(len(trace.steps) + 1)}


def test_a_run_keeps_its_height_at_every_step_even_before_its_gap_opens() -> None:
    gap_run = _stale_after_expiry()
    assert trace_facts(gap_run, 0).spans == () and trace_facts(gap_run).spans
    assert len(_heights(gap_run)) == 1
    no_gap = _stale_after_expiry(PRESETS["lease-aware-receiver"].design)
    assert trace_facts(no_gap).spans == ()
    assert max(_heights(no_gap)) < min(_heights(gap_run))  # the gap label has its own room


def test_a_real_history_marks_a_workers_events_in_its_colour_and_decisions_by_outcome() -> None:
    facts = history_facts(analyse(paused_worker("fenced", "rejected")))
    by_look = {group.look: group.marks for group in facts.groups}
    for look in (GRANT, SEND):
        for mark in by_look[look]:
            worker = mark.label.split(":")[0] if look is GRANT else None
            assert mark.colour in {actor_colour("W1"), actor_colour("W2")}
            if worker:
                assert mark.colour == actor_colour(worker)
    outcomes = {outcome_look(outcome) for outcome in OUTCOMES}
    decisions = [m for g in facts.groups if g.look in outcomes for m in g.marks]
    assert sorted(m.label for m in decisions) == ["✔ 4", "✘ 2"]  # outcome glyph and token
    assert len(by_look[STORE_STARTED]) == 1  # the store's one start, and no restart


def test_a_killed_worker_is_drawn_crashed_from_its_kill_to_the_end() -> None:
    history = paused_worker("none", "accepted")
    killed = replace(history, events=(*history.events, nemesis(1.61, "crash", 2)))
    report = analyse(History(killed.scenario, killed.settings, killed.events))
    facts = history_facts(report)
    (crash,) = [bar for bar in facts.bars if bar.kind == CRASH_BAR]
    assert (crash.lane, crash.start, crash.end) == ("W2", 1.61, last_time(report))
    assert CRASHED in facts.legend
    assert [t.name for t in history_figure(report).data if t.name == CRASHED.name]


def _late(history: History, seconds: float, tokens: dict[int, int] | None = None) -> History:
    """The same history with a start-up of `seconds` before it (the store starting first),
    and tokens renamed as `tokens` says (a lease ID, say, instead of a revision)."""
    tokens = tokens or {}
    events = [storage_start(0.2, receiver=history.settings.receiver)]
    for event in history.events:
        moved = {**event, "t": event["t"] + seconds}
        if "token" in moved:
            moved["token"] = tokens.get(moved["token"], moved["token"])
        events.append(moved)
    return History(history.scenario, history.settings, tuple(events))


def test_a_real_run_is_drawn_from_where_its_story_starts_with_its_real_times() -> None:
    """Start-up (the store starting long before any worker acts) is folded away: the axis
    begins just before the first worker's event, keeps the real seconds, and says so; a
    run whose story starts early keeps its axis from 0."""
    late = analyse(_late(paused_worker("none", "accepted"), 15.0))
    facts = history_facts(late)
    first = 15.10  # W1's grant, the story's first event
    assert first - 0.1 < facts.axis.left < first
    assert facts.axis.right > last_time(late)
    assert "the start-up, 0 to" in facts.subtitle
    drawn = [m.x for g in facts.groups for m in g.marks]
    assert min(drawn) >= facts.axis.left  # the store's start is start-up, not drawn
    early = history_facts(analyse(paused_worker("none", "accepted")))
    assert early.axis.left == 0.0 and "start-up" not in early.subtitle


def test_long_tokens_are_drawn_short_with_a_key() -> None:
    """A token of many digits (a lease ID) is named τ1, τ2… on the figure; the figure's key
    says which number each stands for; short tokens stay as they are."""
    ids = {2: 7587869283472663075, 4: 7587869283472663112}
    facts = history_facts(analyse(_late(paused_worker("fenced", "rejected"), 0.0, ids)))
    labels = [m.label for g in facts.groups for m in g.marks if m.label]
    assert "W1: tok τ1" in labels and "W2: tok τ2" in labels and "✘ τ1" in labels
    assert not any(str(ids[2]) in label for label in labels)
    assert facts.key == (f"τ1 = {ids[2]}", f"τ2 = {ids[4]}")
    figure = swimlane_figure(facts)
    (key,) = figure.layout.annotations
    assert key.text == "<br>".join(facts.key)
    plain = history_facts(analyse(paused_worker("fenced", "rejected")))
    assert plain.key == () and not swimlane_figure(plain).layout.annotations
