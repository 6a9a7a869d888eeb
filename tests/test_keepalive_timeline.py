"""Keepalives and crashes on the timeline: a renewal moves the end of the lease bar from the
step it is made (never earlier), and a crashed worker's lane ends at its crash, drawn apart
from a pause."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from model.design import REFERENCE_BOUNDS, Design
from model.formats.trace import Trace, replay
from model.presets import PRESETS
from model.rules import Action
from tests.test_timeline import PICKS, _random_run
from webapp.draw.swimlane import timeline_figure
from webapp.show.chapters import chapter_traces
from webapp.show.events import (
    LEASE_ACTIVE,
    LEASE_PAST,
    crashes,
    lease_segments,
    pauses,
    step_positions,
    time_x,
)
from webapp.show.looks import CRASHED, PAUSED
from webapp.show.trace_swimlane import legend_looks

RENEW_THEN_PAUSE = (
    Action("Acquire", 1),
    Action("Tick"),
    Action("Renew", 1),
    Action("Tick"),
    Action("Tick"),
    Action("Acquire", 2),
)
"""W1 renews once at t=1, then pauses: its lease runs out at t=3 and W2 is granted the lock."""


def _renew_then_pause() -> Trace:
    return replay(Design(renew=True, crashes=1), REFERENCE_BOUNDS, RENEW_THEN_PAUSE)


def _w1_active(trace: Trace, upto: int) -> float:
    """Where W1's first lease bar ends after `upto` steps."""
    return next(s.end for s in lease_segments(trace, upto) if s.worker == 1 and s.grant == 1)


def test_a_renewal_extends_the_bar_from_its_own_step_only() -> None:
    trace = _renew_then_pause()
    lease = trace.bounds.lease
    assert [_w1_active(trace, upto) for upto in (1, 2)] == [time_x(lease)] * 2  # as granted
    renewed_at = trace.state_at(2)["now"]
    assert _w1_active(trace, 3) == time_x(renewed_at + lease)  # the keepalive moved it
    assert _w1_active(trace, len(trace.steps)) == time_x(renewed_at + lease)
    # a paused holder renews nothing: its lease ran out and the next grant went to W2
    assert any(p.worker == 1 for p in pauses(trace))
    assert trace.state_at(len(trace.steps))["holder"] == 2


def test_while_stepping_a_current_lease_ends_where_the_coordinator_says() -> None:
    """At every step of chapter 0's keepalive runs, the bar of a lease still current ends at
    the coordinator's `expires` of that step."""
    for trace in chapter_traces(0)[1:]:
        for upto in range(1, len(trace.steps) + 1):
            state = trace.state_at(upto)
            holder = state["holder"]
            if not holder or state["now"] >= state["expires"]:
                continue
            current = [
                s
                for s in lease_segments(trace, upto)
                if s.worker == holder and s.status == LEASE_ACTIVE
            ][-1]
            assert current.end == time_x(state["expires"]), (trace.title, upto)


def test_a_crashed_lane_ends_at_the_crash_and_is_no_pause() -> None:
    lease_run = chapter_traces(0)[1]
    crash = next(s.number for s in lease_run.steps if s.action.name == "Crash")
    assert crashes(lease_run, crash - 1) == ()
    (down,) = crashes(lease_run, len(lease_run.steps))
    assert down.worker == 2 and down.step == crash
    assert down.end == step_positions(lease_run)[-1] > down.start  # ended from the crash to now
    # W2 never counts as paused after its crash; W1, paused earlier, never as crashed
    assert all(p.worker != 2 or p.end <= down.start for p in pauses(lease_run))
    assert any(p.worker == 1 for p in pauses(lease_run))
    # the crashed holder is not drawn "past its lease" after it is down
    assert not [
        s
        for s in lease_segments(lease_run)
        if s.worker == 2 and s.status == LEASE_PAST and s.end > down.start
    ]
    assert {CRASHED, PAUSED} <= set(legend_looks(lease_run))


def test_the_figure_draws_the_crashed_lane_as_a_solid_line_and_the_pause_hatched() -> None:
    no_lease = chapter_traces(0)[0]
    figure = timeline_figure(no_lease, len(no_lease.steps))
    by_name = {t.name: t for t in figure.data if t.showlegend is False}
    line = by_name[CRASHED.name]
    assert line.mode == "lines" and line.line.dash == "solid"
    (down,) = crashes(no_lease)
    assert list(line.x[:2]) == [down.start, down.end] and down.end > down.start
    assert by_name[PAUSED.name].fillpattern.shape == "/"
    assert "✖ crashed" in by_name["crash labels"].text
    entries = [t.name for t in figure.data if t.showlegend is not False]
    assert entries.count(CRASHED.name) == 1 and "paused" in entries


@settings(max_examples=40, deadline=None)
@given(PICKS, st.sampled_from(["keepalive-lease", "keepalive-fencing", "lock-without-lease"]))
def test_random_runs_draw_what_is_known_at_each_step(picks: list[int], preset: str) -> None:
    """At every step of a random run: the current holder's bar ends at the coordinator's
    `expires` then (no later renewal shows early), a crashed worker's lane runs from its
    crash to now, and it is never drawn paused or past its lease after its crash."""
    trace = _random_run(PRESETS[preset].design, picks)
    positions = step_positions(trace)
    for upto in range(1, len(trace.steps) + 1):
        state = trace.state_at(upto)
        holder = state["holder"]
        current = [
            s
            for s in lease_segments(trace, upto)
            if s.worker == holder and s.status == LEASE_ACTIVE and s.grant == state["grants"]
        ]
        if holder and state["now"] < state["expires"] and current:
            assert current[-1].end == time_x(state["expires"]), upto
        for down in crashes(trace, upto):
            assert down.end == positions[upto - 1] >= down.start
            assert all(p.worker != down.worker or p.end <= down.start for p in pauses(trace, upto))
            assert not [
                s
                for s in lease_segments(trace, upto)
                if s.worker == down.worker and s.status == LEASE_PAST and s.end > down.start
            ]
