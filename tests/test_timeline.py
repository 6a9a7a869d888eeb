"""The swimlane timeline built from replayed traces: lanes, markers, bars, arrows, hover, frames."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import pytest

from fencing.stories import paused_worker_story
from model.design import Bounds, Design
from model.rules import Action
from model.trace import Trace, replay
from webapp.events import (
    LEASE_ACTIVE,
    LEASE_PAST,
    lease_segments,
    messages,
    step_positions,
    time_x,
)
from webapp.style import ACCEPTED, REJECTED, VIOLATING
from webapp.timeline import MOVING_KEYS, timeline_figure

ARROW_TRACES = ("write arrows", "read arrows")


def _runs(xs: Sequence[Any] | None) -> list[list[float]]:
    """The None-separated runs of real x values of one trace (one run per bar or arrow)."""
    runs: list[list[float]] = [[]]
    for x in xs or ():
        if x is None:
            runs.append([])
        else:
            runs[-1].append(x)
    return [run for run in runs if run]


def _indices(figure: go.Figure, names: Sequence[str]) -> list[int]:
    """Positions of the figure's traces with one of these names (frames keep the order)."""
    return [i for i, trace in enumerate(figure.data) if trace.name in names]


def _arrow_count(figure: go.Figure, data: Sequence[Any] | None = None) -> int:
    """How many message arrows are drawn in the figure (or in one frame's `data`)."""
    data = figure.data if data is None else data
    return sum(len(_runs(data[i].x)) for i in _indices(figure, ARROW_TRACES))


def _lease_bars(figure: go.Figure) -> list[tuple[float, float]]:
    """(start, end) of every lease bar: the x extent of each filled rectangle."""
    return [
        (min(run), max(run))
        for trace in figure.data
        if trace.fill == "toself"
        for run in _runs(trace.x)
    ]


def _points(figure: go.Figure, prefix: str) -> int:
    """How many real (non-placeholder) points the traces whose name ends with `prefix` have."""
    return sum(
        sum(1 for x in trace.x if x is not None)
        for trace in figure.data
        if trace.name and trace.name.endswith(prefix)
    )


def _accepted_and_rejected(trace: Trace) -> tuple[int, int]:
    """Accepted writes and rejected requests counted from the states alone."""
    layout = trace.system.layout
    accepted = rejected = 0
    for step in trace.steps:
        if step.action.name != "Deliver":
            continue
        w = step.action.worker
        column = layout.index[f"tok[{w}]"]
        if step.before[column] and not step.after[column]:
            rejected += 1
        else:
            accepted += 1
    return accepted, rejected


@pytest.mark.parametrize("receiver", ["none", "fenced"])
def test_lanes_are_coordinator_workers_receiver(receiver: str) -> None:
    figure = timeline_figure(paused_worker_story(receiver).trace())
    labels = [text.replace("<b>", "").replace("</b>", "") for text in figure.layout.yaxis.ticktext]
    assert labels[:4] == ["coordinator", "W1", "W2", "receiver"]


@pytest.mark.parametrize("receiver", ["none", "fenced"])
def test_accepted_and_rejected_markers_match_the_trace(receiver: str) -> None:
    trace = paused_worker_story(receiver).trace()
    figure = timeline_figure(trace)
    accepted, rejected = _accepted_and_rejected(trace)
    shown_accepted = _points(figure, ACCEPTED.word) + _points(figure, VIOLATING.word)
    assert shown_accepted == accepted
    assert _points(figure, REJECTED.word) == rejected
    if receiver == "none":
        assert (accepted, rejected) == (2, 0)
        assert _points(figure, VIOLATING.word) == 1
    else:
        assert (accepted, rejected) == (1, 1)


def test_lease_bars_end_at_expiry() -> None:
    trace = paused_worker_story("none").trace()
    segments = lease_segments(trace)
    first = next(s for s in segments if s.worker == 1 and s.status == LEASE_ACTIVE)
    assert first.end == pytest.approx(time_x(trace, 2))  # W1's lease ran until t=2
    past = next(s for s in segments if s.worker == 1 and s.status == LEASE_PAST)
    assert past.start == pytest.approx(first.end)
    figure = timeline_figure(trace)
    bars = _lease_bars(figure)
    assert len(bars) == len(segments)
    assert time_x(trace, 2) in [end for _, end in bars]
    assert sorted(bars) == sorted((s.start, s.end) for s in segments)


def test_lease_still_running_at_the_end_is_drawn_to_its_expiry() -> None:
    trace = replay(Design(), Bounds(), [Action("Acquire", 1)])
    (segment,) = lease_segments(trace)
    assert segment.status == LEASE_ACTIVE
    assert segment.end == pytest.approx(time_x(trace, 2))


@pytest.mark.parametrize("receiver", ["none", "fenced"])
def test_one_arrow_per_delivered_send(receiver: str) -> None:
    trace = paused_worker_story(receiver).trace()
    delivered = sum(1 for step in trace.steps if step.action.name == "Deliver")
    figure = timeline_figure(trace)
    assert _arrow_count(figure) == delivered == len(messages(trace))
    heads = [
        size
        for i in _indices(figure, ARROW_TRACES)
        for x, size in zip(figure.data[i].x, figure.data[i].marker.size, strict=False)
        if x is not None and size
    ]
    assert len(heads) == delivered  # one arrowhead at the delivery end of each arrow
    assert all(figure.data[i].marker.symbol == "arrow" for i in _indices(figure, ARROW_TRACES))


def test_an_undelivered_send_has_no_arrow_yet() -> None:
    trace = paused_worker_story("fenced").trace()
    figure = timeline_figure(trace, upto=7)  # W1 has sent, not yet delivered
    assert _arrow_count(figure) == 1


def test_hover_text_contains_each_step_sentence() -> None:
    trace = paused_worker_story("none").trace()
    figure = timeline_figure(trace)
    hovers = " ".join(str(h) for t in figure.data if t.hovertext for h in t.hovertext)
    for step in trace.steps:
        assert step.sentence in hovers
    assert trace.steps[-2].reasons[0].text in hovers
    assert "W1's write carrying token 1: accepted, violates" in hovers  # the late write's arrow


def test_steps_within_a_tick_go_left_to_right_and_ticks_sit_on_integers() -> None:
    trace = paused_worker_story("fenced").trace()
    positions = step_positions(trace)
    assert list(positions) == sorted(positions)
    for step, x in zip(trace.steps, positions, strict=True):
        if step.action.name == "Tick":
            assert x == time_x(trace, trace.state_at(step.number)["now"])
    assert list(timeline_figure(trace).layout.xaxis.ticktext[:3]) == ["0", "1", "2"]


def test_frames_reveal_one_step_at_a_time() -> None:
    trace = paused_worker_story("fenced").trace()
    figure = timeline_figure(trace, upto=3)
    assert len(figure.frames) == len(trace.steps) + 1
    counts = [_arrow_count(figure, frame.data) for frame in figure.frames]
    assert counts == sorted(counts)
    assert counts[-1] == len(messages(trace))
    assert figure.layout.sliders[0].active == 3
    assert [b.label for b in figure.layout.updatemenus[0].buttons] == ["▶ Play", "❚❚ Pause"]
    assert all(len(frame.data) == len(figure.data) for frame in figure.frames)


def test_a_long_trace_builds() -> None:
    bounds = Bounds(workers=2, lease=1, horizon=20, grants=8, writes=1)
    actions: list[Action] = []
    for round_number in range(8):
        w = 1 + round_number % 2
        actions += [
            Action("Acquire", w),
            Action("Send", w),
            Action("Deliver", w),
            Action("Release", w),
        ]
        actions += [Action("Tick")]
    actions += [Action("Tick")] * 12
    trace = replay(Design(), bounds, actions[:60])
    assert len(trace.steps) == 52
    longer = replay(
        Design(),
        Bounds(workers=2, lease=1, horizon=30, grants=8, writes=1),
        actions + [Action("Tick")] * 8,
    )
    assert len(longer.steps) >= 60
    figure = timeline_figure(longer)
    assert len(figure.frames) == len(longer.steps) + 1


def _sixty_steps() -> Trace:
    """A lease-only run of 60 steps with many grants, sends, deliveries and lease bars."""
    actions: list[Action] = []
    for round_number in range(8):
        w = 1 + round_number % 3
        actions += [Action("Acquire", w), Action("Send", w), Action("Deliver", w), Action("Tick")]
        actions += [Action("Send", w), Action("Deliver", w), Action("Release", w), Action("Tick")]
    trace = replay(
        Design(receiver="none"),
        Bounds(workers=3, lease=1, horizon=30, grants=8, writes=2),
        actions[:60],
    )
    assert len(trace.steps) == 60
    return trace


def test_a_60_step_figure_has_few_traces_and_lean_frames() -> None:
    trace = _sixty_steps()
    figure = timeline_figure(trace)
    assert len(figure.frames) == 61
    assert len(figure.data) <= 20
    assert not figure.layout.shapes and not figure.layout.annotations
    for frame in figure.frames:
        assert [t.type for t in frame.data] == [t.type for t in figure.data]
        assert not frame.layout.shapes and not frame.layout.annotations
        for data in frame.data:
            assert set(data.to_plotly_json()) <= {"type", *MOVING_KEYS}
    assert _arrow_count(figure, figure.frames[-1].data) == len(messages(trace)) >= 8
    assert len(_lease_bars(figure)) == len(lease_segments(trace)) >= 8


def test_a_frameless_figure_is_the_same_picture() -> None:
    trace = paused_worker_story("none").trace()
    still = timeline_figure(trace, animate=False)
    animated = timeline_figure(trace)
    assert not still.frames
    assert not still.layout.sliders and not still.layout.updatemenus
    assert still.data == animated.data
    assert still.layout.margin.b < animated.layout.margin.b  # no room kept for the controls


@pytest.mark.parametrize("upto", [None, 0, 5])
def test_the_figure_passes_plotly_validation(upto: int | None) -> None:
    trace = paused_worker_story("none").trace()
    for animate in (True, False):
        figure = timeline_figure(trace, upto=upto, animate=animate)
        go.Figure(figure.to_dict())  # built unvalidated for speed: check every attribute once here
