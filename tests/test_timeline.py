"""The swimlane timeline built from replayed traces: time as the x axis, lease bars exactly L
ticks long, pauses, requests in flight, the gap, the legend, and the state table in words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fencing.stories import PAUSED_WORKER_BOUNDS, paused_worker_story
from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS, Bounds, Design, Receiver
from model.formats.trace import Trace, replay
from model.presets import PRESETS
from model.rules import Action
from model.system import System
from webapp.draw.swimlane import timeline_figure
from webapp.show.chapters import BY_NUMBER, build_run
from webapp.show.events import (
    GAP_CLOSED_BY_NEWER,
    GAP_CLOSED_WITH_NOTHING_TO_SEND,
    LEASE_ACTIVE,
    LEASE_PAST,
    events,
    gaps,
    lease_segments,
    messages,
    pauses,
    step_positions,
    time_x,
)
from webapp.show.style import ACCEPTED, GAP_COLOUR, GAP_FILL, REJECTED, VIOLATING
from webapp.show.trace_swimlane import (
    GAP_LABEL,
    GAP_LABEL_LINES,
    legend_looks,
    marker_label,
    message_hover,
)
from webapp.show.views import actor_rows

STALE_AFTER_EXPIRY = (
    Action("Acquire", 1),
    Action("Send", 1),
    Action("Tick"),
    Action("Tick"),
    Action("Acquire", 2),
    Action("Deliver", 1),
    Action("Send", 2),
    Action("Deliver", 2),
)
"""W1 sends at t=0, its write sits in the network past its lease, W2 is granted the lock and
W1's write lands before W2's first: the gap (chapter 3's first run)."""


def _stale_after_expiry(design: Design | None = None) -> Trace:
    """The gap run at the reference bounds W=2 L=2 T=6 G=3 K=2."""
    return replay(design or Design(), REFERENCE_BOUNDS, STALE_AFTER_EXPIRY)


def _runs(xs: Sequence[Any] | None) -> list[list[float]]:
    """The None-separated runs of real x values of one trace (one run per bar or arrow)."""
    runs: list[list[float]] = [[]]
    for x in xs or ():
        if x is None:
            runs.append([])
        else:
            runs[-1].append(x)
    return [run for run in runs if run]


def _named(figure: go.Figure, name: str) -> list[Any]:
    """The figure's data traces with this name (legend entries, which have no points, left out)."""
    return [t for t in figure.data if t.name == name and any(x is not None for x in t.x or ())]


def _arrow_count(figure: go.Figure) -> int:
    """How many request arrows (drops to the receiver) the figure draws."""
    return sum(len(_runs(t.x)) for t in figure.data if t.name.endswith(" arrows"))


def _lease_bars(figure: go.Figure, legend: str) -> list[tuple[float, float]]:
    """(start, end) of every bar of one lease look ("lease" or "past its lease")."""
    return [
        (min(run), max(run))
        for t in figure.data
        if t.fill == "toself" and t.legendgroup == legend and t.showlegend is False
        for run in _runs(t.x)
    ]


def _points(figure: go.Figure, name: str) -> int:
    """How many real points the marker traces with this legend name have."""
    return sum(sum(1 for x in t.x if x is not None) for t in _named(figure, name))


def _legend(figure: go.Figure) -> list[str]:
    """The names the legend shows, in order."""
    return [t.name for t in figure.data if t.showlegend is not False]


def _accepted_and_rejected(trace: Trace) -> tuple[int, int]:
    """Accepted writes and rejected requests counted from the states alone."""
    layout = trace.system.layout
    accepted = rejected = 0
    for step in trace.steps:
        if step.action.name != "Deliver":
            continue
        column = layout.index[f"tok[{step.action.worker}]"]
        if step.before[column] and not step.after[column]:
            rejected += 1
        else:
            accepted += 1
    return accepted, rejected


# ----- lanes, markers, time axis ------------------------------------------------------------


@pytest.mark.parametrize("receiver", ["none", "fenced"])
def test_lanes_are_coordinator_workers_receiver_clock(receiver: str) -> None:
    figure = timeline_figure(paused_worker_story(receiver).trace())
    labels = [text.replace("<b>", "").replace("</b>", "") for text in figure.layout.yaxis.ticktext]
    assert labels == ["coordinator", "W1", "W2", "receiver", "clock"]


@pytest.mark.parametrize("receiver", ["none", "fenced"])
def test_accepted_and_rejected_markers_match_the_trace(receiver: str) -> None:
    trace = paused_worker_story(receiver).trace()
    figure = timeline_figure(trace)
    accepted, rejected = _accepted_and_rejected(trace)
    shown_accepted = _points(figure, f"{ACCEPTED.glyph} accepted")
    shown_accepted += _points(figure, f"{VIOLATING.glyph} violating")
    assert shown_accepted == accepted
    assert _points(figure, f"{REJECTED.glyph} rejected") == rejected
    if receiver == "none":
        assert (accepted, rejected) == (2, 0)
        assert _points(figure, f"{VIOLATING.glyph} violating") == 1
    else:
        assert (accepted, rejected) == (1, 1)


def test_every_step_sits_in_the_band_of_its_tick() -> None:
    trace = _stale_after_expiry()
    positions = step_positions(trace)
    assert list(positions) == sorted(positions) and len(set(positions)) == len(positions)
    for step, x in zip(trace.steps, positions, strict=True):
        before, after = trace.state_at(step.number - 1)["now"], trace.state_at(step.number)["now"]
        if step.action.name == "Tick":
            assert x == time_x(after) == before + 1  # where the new tick begins
        else:
            assert before < x < before + 1  # inside the band of tick `before`
    # t=0: grant, send; t=2: grant, delivery, send, delivery, spread evenly in order
    assert positions == pytest.approx((1 / 3, 2 / 3, 1, 2, 2.2, 2.4, 2.6, 2.8))


def test_event_times_are_the_ticks_the_narration_names() -> None:
    trace = _stale_after_expiry()
    for event in events(trace):
        if event.step.action.name != "Tick":
            assert f"t={event.time}" in event.step.sentence
            assert int(event.x) == event.time


def test_the_axis_is_one_band_per_tick_and_ends_at_the_last_tick() -> None:
    trace = _stale_after_expiry()
    assert trace.state_at(len(trace.steps))["now"] == 2
    figure = timeline_figure(trace)
    assert list(figure.layout.xaxis.range) == [0.0, 3.0]
    assert list(figure.layout.xaxis.ticktext) == ["t=0", "t=1", "t=2"]
    assert list(figure.layout.xaxis.tickvals) == [0.5, 1.5, 2.5]  # each label mid-band
    assert figure.layout.xaxis.title.text == "time (ticks)"


def test_no_second_stepper_in_the_figure() -> None:
    trace = _stale_after_expiry()
    for upto in (None, 0, 4, 8):
        figure = timeline_figure(trace, upto)
        assert not figure.frames
        assert not figure.layout.sliders and not figure.layout.updatemenus


def test_a_step_shows_only_the_steps_taken_so_far() -> None:
    trace = _stale_after_expiry()
    for upto in range(len(trace.steps) + 1):
        figure = timeline_figure(trace, upto)
        markers = sum(
            _points(figure, look.name)
            for look in legend_looks(trace)
            if look.symbol and look.name not in ("lease", "past its lease", "gap", "current step")
        )
        assert markers == upto
        ring = _named(figure, "current step")
        if upto:
            assert [ring[0].x[0]] == [step_positions(trace)[upto - 1]]
        else:
            assert not ring


def test_the_first_frame_shows_lanes_axis_and_the_lease_length() -> None:
    trace = _stale_after_expiry()
    figure = timeline_figure(trace, 0)
    assert len(figure.layout.yaxis.ticktext) == 5
    assert list(figure.layout.xaxis.ticktext) == ["t=0", "t=1", "t=2"]
    subtitle = figure.layout.title.subtitle.text
    assert "before the first step" in subtitle and "now t=0" in subtitle
    assert "a lease lasts 2 ticks" in subtitle
    assert _legend(figure) == _legend(timeline_figure(trace, 8))  # the same legend all along


def test_hover_text_contains_each_step_sentence() -> None:
    trace = paused_worker_story("none").trace()
    figure = timeline_figure(trace)
    hovers = " ".join(str(h) for t in figure.data if t.hovertext for h in t.hovertext)
    for step in trace.steps:
        assert step.sentence in hovers
    assert trace.steps[-2].reasons[0].text in hovers
    assert "W1's write carrying token 1, sent at t=2: accepted, violates" in hovers


# ----- leases ------------------------------------------------------------------------------


def test_a_lease_is_exactly_l_ticks_from_the_start_of_its_tick() -> None:
    trace = paused_worker_story("none").trace()
    assert trace.bounds.lease == 2
    segments = lease_segments(trace)
    first = next(s for s in segments if s.worker == 1 and s.status == LEASE_ACTIVE)
    assert (first.start, first.end) == (0.0, 2.0)  # granted at t=0: bands t=0 and t=1
    past = next(s for s in segments if s.worker == 1 and s.status == LEASE_PAST)
    assert past.start == first.end
    figure = timeline_figure(trace)
    assert (0.0, 2.0) in _lease_bars(figure, "lease")
    assert sorted(_lease_bars(figure, "lease") + _lease_bars(figure, "past its lease")) == sorted(
        (s.start, s.end) for s in segments
    )


@pytest.mark.parametrize("lease", [1, 2, 3])
def test_every_lease_that_runs_out_is_drawn_l_ticks_long(lease: int) -> None:
    bounds = Bounds(workers=2, lease=lease, horizon=8, grants=2, writes=1)
    actions = [Action("Acquire", 1), *[Action("Tick")] * lease, Action("Acquire", 2)]
    actions += [Action("Tick")] * lease
    trace = replay(Design(), bounds, actions)
    active = [s for s in lease_segments(trace) if s.status == LEASE_ACTIVE]
    assert [(s.worker, s.end - s.start) for s in active] == [(1, lease), (2, lease)]
    assert active[1].start == lease  # granted at t=lease, from the start of that tick


def test_a_lease_still_running_is_drawn_to_its_expiry_past_the_axis() -> None:
    trace = _stale_after_expiry()
    w2 = next(s for s in lease_segments(trace) if s.worker == 2)
    assert (w2.start, w2.end) == (2.0, 4.0)  # granted at t=2, runs until t=4
    figure = timeline_figure(trace)
    assert (2.0, 4.0) in _lease_bars(figure, "lease")
    words = [text for t in figure.data if t.name.startswith("lease labels") for text in t.text]
    assert "lease #2 → t=4" in words


def test_a_release_ends_the_lease_where_it_happens() -> None:
    trace = paused_worker_story("fenced").trace()
    release = step_positions(trace)[-1]
    w2 = next(s for s in lease_segments(trace) if s.worker == 2)
    assert w2.end == release < 2.0 + trace.bounds.lease
    # before the release is shown, the lease is drawn as granted: to its expiry
    earlier = next(s for s in lease_segments(trace, 8) if s.worker == 2)
    assert earlier.end == 4.0


# ----- pauses, requests in flight -----------------------------------------------------------


def test_the_paused_worker_is_drawn_paused_while_time_passes() -> None:
    trace = paused_worker_story("none").trace()
    (pause,) = pauses(trace)
    grant = step_positions(trace)[0]
    assert (pause.worker, pause.start, pause.end, pause.ticks) == (1, grant, 2.0, (0, 1))
    assert pauses(trace, 1) == ()  # no time has passed yet
    assert pauses(trace, 2)[0].ticks == (0,)
    figure = timeline_figure(trace)
    (hatched,) = _named(figure, "paused")
    assert _runs(hatched.x) == [[grant, 2.0, 2.0, grant, grant]]
    assert "paused" in _legend(figure)


def test_a_worker_waiting_for_its_request_is_not_paused_its_request_is_in_flight() -> None:
    trace = _stale_after_expiry()
    assert pauses(trace) == ()
    (flying,) = messages(trace, 5)
    assert flying.worker == 1 and flying.in_flight and flying.sent_time == 0
    figure = timeline_figure(trace, 5)
    (path,) = _named(figure, "W1 in the network")
    assert _runs(path.x) == [[2 / 3, 2 / 3, pytest.approx(2.2)]]  # from the send to now
    (head,) = _named(figure, "in flight")
    assert list(head.text) == ["✉ write in flight"]
    assert _arrow_count(figure) == 0
    assert "paused" not in _legend(figure)


def test_a_delivered_request_drops_to_the_receiver_where_it_is_handled() -> None:
    trace = _stale_after_expiry()
    figure = timeline_figure(trace, 6)
    (path,) = _named(figure, "W1 in the network")
    assert _runs(path.x) == [[2 / 3, 2 / 3, pytest.approx(2.4)]]
    assert _arrow_count(figure) == 1
    assert not _named(figure, "in flight")
    delivered = [m for m in messages(trace) if not m.in_flight]
    assert len(delivered) == 2 == _arrow_count(timeline_figure(trace))


def test_an_idle_worker_is_idle_and_a_stopped_one_with_work_is_paused() -> None:
    """A holder that has sent its writes and only lets time pass (it could release) is idle,
    not paused; one that still has a write to send and lets time pass is paused, from its
    last event in that tick."""
    bounds = Bounds(workers=1, lease=2, horizon=4, grants=1, writes=1)
    idle = replay(
        Design(),
        bounds,
        [Action("Acquire", 1), Action("Send", 1), Action("Deliver", 1), Action("Tick")],
    )
    assert pauses(idle) == ()
    stopped = replay(Design(), bounds, [Action("Acquire", 1), Action("Tick")])
    (pause,) = pauses(stopped)
    assert pause.start == step_positions(stopped)[0]  # from its grant, its last event
    assert pause.end == 1.0 and pause.ticks == (0,)


def test_a_keepalive_holder_is_paused_only_when_its_lease_runs_out_unrenewed() -> None:
    """Under keepalives, a holder with nothing to send is idle while its lease still runs,
    and paused across the tick that ends a lease it could have renewed."""
    design = PRESETS["keepalive-lease"].design
    bounds = Bounds(workers=1, lease=2, horizon=4, grants=1, writes=1)
    written = [Action("Acquire", 1), Action("Send", 1), Action("Deliver", 1)]
    one_tick = replay(design, bounds, [*written, Action("Tick")])
    assert pauses(one_tick) == ()  # the lease runs until t=2: nothing is due yet
    two_ticks = replay(design, bounds, [*written, Action("Tick"), Action("Tick")])
    (pause,) = pauses(two_ticks)
    assert pause.ticks == (1,)  # the tick that ends its lease, unrenewed


# ----- the gap -------------------------------------------------------------------------------


def test_the_gap_runs_from_the_old_lease_expiry_to_the_new_holders_first_request() -> None:
    trace = _stale_after_expiry()
    (gap,) = gaps(trace)
    assert (gap.worker, gap.grant) == (1, 1)
    assert gap.start == 2.0  # W1's lease expired where t=2 begins
    assert gap.end_step == 8 and gap.end == step_positions(trace)[7]  # W2's write handled
    assert gap.closed_by == GAP_CLOSED_BY_NEWER
    violating = next(e for e in events(trace) if e.step.violations)
    assert gap.start < violating.x < gap.end  # the stale write lands inside the gap


def test_the_gap_is_shaded_and_labelled() -> None:
    trace = _stale_after_expiry()
    figure = timeline_figure(trace)
    shaded = [s for s in figure.layout.shapes if s.fillcolor == GAP_FILL]
    assert [(s.x0, s.x1) for s in shaded] == [(2.0, step_positions(trace)[7])]
    (label,) = _named(figure, "gap labels")
    assert list(label.text) == [GAP_LABEL_LINES]
    assert GAP_LABEL_LINES.replace("<br>", " ") == GAP_LABEL
    assert "gap" in _legend(figure)


def test_the_gap_opens_at_expiry_and_grows_with_the_steps() -> None:
    trace = _stale_after_expiry()
    assert gaps(trace, 3) == ()  # t=1: W1's lease still runs
    at_expiry = gaps(trace, 4)[0]
    assert at_expiry.open and at_expiry.start == 2.0
    assert gaps(trace, 6)[0].open and gaps(trace, 6)[0].end == step_positions(trace)[5]
    assert not gaps(trace, 8)[0].open
    assert not [s for s in timeline_figure(trace, 3).layout.shapes if s.fillcolor == GAP_FILL]


def test_a_lease_aware_receiver_has_no_gap_it_refuses_the_old_token_at_once() -> None:
    """Its test asks for the live lease, so from the moment W1's lease is over the receiver
    would refuse W1's request: there is no window in which the stale write could land."""
    trace = _stale_after_expiry(PRESETS["lease-aware-receiver"].design)
    assert gaps(trace) == ()
    assert [s.outcome for s in trace.steps if s.outcome] == ["rejected", "accepted"]


def _lost_update(design: Design) -> Trace:
    """The explorer's shortest lost update (unfenced reads) replayed on a design."""
    verdict = explore(PRESETS["rmw-fencing-unfenced-reads"].design, REFERENCE_BOUNDS)
    actions = verdict.verdicts["P5"].actions
    assert actions is not None
    return replay(design, REFERENCE_BOUNDS, actions)


def test_an_unfenced_read_leaves_the_gap_open_and_the_stale_write_lands_inside_it() -> None:
    """The new holder's read carries no token, so the receiver's mark does not move: the
    gap stays open past the read, the stale write lands in it, and it closes only when the
    new holder's write raises the mark above the old token."""
    trace = _lost_update(PRESETS["rmw-fencing-unfenced-reads"].design)
    (gap,) = gaps(trace)
    positions = step_positions(trace)
    read = next(s for s in trace.steps if s.outcome == "read" and s.action.worker == 1)
    stale = next(s for s in trace.steps if "P2" in s.violations)
    assert gap.start < positions[read.number - 1] < positions[stale.number - 1] <= gap.end
    assert gap.end_step is not None
    closing = trace.steps[gap.end_step - 1]
    assert closing.outcome == "accepted" and closing.action.worker == 1  # the new holder's write
    assert trace.state_at(gap.end_step)["hwm"] == 2


def test_a_fenced_read_closes_the_gap_where_it_raises_the_mark() -> None:
    trace = _lost_update(PRESETS["rmw-fencing-fenced-reads"].design)
    (gap,) = gaps(trace)
    assert gap.end_step is not None and gap.closed_by == GAP_CLOSED_BY_NEWER
    closing = trace.steps[gap.end_step - 1]
    assert closing.outcome == "read" and closing.action.worker == 1
    assert trace.state_at(gap.end_step - 1)["hwm"] < 2 == trace.state_at(gap.end_step)["hwm"]
    stale = next(s for s in trace.steps if s.outcome == "rejected")
    assert stale.number > gap.end_step  # refused after the gap closed


def test_a_checked_write_stays_in_the_gap_until_it_is_applied() -> None:
    """A split receiver applies what it checked without checking again: the mark rising
    after the check does not close the gap of the checked write, and once applied, the
    mark has gone back to the old token, so the gap stays open."""
    design = PRESETS["nonatomic-receiver"].design
    actions = explore(design, REFERENCE_BOUNDS).verdicts["P3"].actions
    assert actions is not None
    trace = replay(design, REFERENCE_BOUNDS, actions)
    (gap,) = gaps(trace)
    stale = next(s for s in trace.steps if "P3" in s.violations)
    assert stale.action.name == "Apply"
    assert trace.state_at(stale.number - 1)["hwm"] == 2  # the mark already saw token 2
    assert gap.start < step_positions(trace)[stale.number - 1] <= gap.end
    assert gap.open and trace.state_at(stale.number)["hwm"] == 1


def test_chapter_3_first_run_shows_the_gap() -> None:
    trace = build_run(BY_NUMBER[3].runs[0])
    assert gaps(trace)
    figure = timeline_figure(trace, len(trace.steps))
    assert [s for s in figure.layout.shapes if s.fillcolor == GAP_FILL]
    assert _named(figure, "gap labels")


def test_a_run_without_a_gap_shows_none() -> None:
    bounds = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
    actions = [Action("Acquire", 1), Action("Send", 1), Action("Deliver", 1), Action("Tick")]
    actions += [Action("Tick"), Action("Acquire", 2), Action("Send", 2), Action("Deliver", 2)]
    trace = replay(Design(), bounds, actions)
    # W1's lease expired while it still held its token, but with nothing left to send
    assert any(s.status == LEASE_PAST for s in lease_segments(trace))
    assert gaps(trace) == ()
    figure = timeline_figure(trace)
    assert not [s for s in figure.layout.shapes if s.fillcolor == GAP_FILL]
    assert not _named(figure, "gap labels") and "gap" not in _legend(figure)
    assert "paused" not in _legend(figure)  # it could have released: idle, not paused


def test_a_superseded_lease_opens_the_gap_at_the_coordinator_restart() -> None:
    design = Design(token="counter-volatile", coordinator_restarts=1)
    bounds = Bounds(workers=2, lease=3, horizon=4, grants=2, writes=1)
    trace = replay(design, bounds, [Action("Acquire", 1), Action("CoordinatorRestart")])
    (gap,) = gaps(trace)
    assert gap.start == step_positions(trace)[1] and gap.open


def _random_run(design: Design, picks: Sequence[int]) -> Trace:
    """A run of the design at the reference bounds: at each step, the enabled action `pick`."""
    system = System(design, REFERENCE_BOUNDS)
    state, actions = system.initial(), []
    for pick in picks:
        enabled = system.enabled(state)
        if not enabled:
            break
        rule = enabled[pick % len(enabled)]
        actions.append(rule.action)
        state = system.apply(state, rule)
    return replay(design, REFERENCE_BOUNDS, actions)


PICKS = st.lists(st.integers(min_value=0, max_value=60), max_size=30)


@settings(max_examples=40, deadline=None)
@given(PICKS)
def test_under_fencing_every_write_outside_its_lease_lands_in_the_gap(picks: list[int]) -> None:
    trace = _random_run(Design(), picks)
    positions = step_positions(trace)
    for step in trace.steps:
        if "P2" in step.violations:
            x, w = positions[step.number - 1], step.action.worker
            assert any(g.worker == w and g.start < x <= g.end for g in gaps(trace)), step.sentence


def test_with_a_lease_only_the_gap_never_closes_by_a_newer_token() -> None:
    """A plain store keeps no mark: W2's write lands, and W1's late write still lands in
    the gap, which ends only when W1 has nothing more to send."""
    trace = paused_worker_story("none").trace()
    (gap,) = gaps(trace)
    late = next(step for step in trace.steps if "P2" in step.violations)
    w2_write = next(step for step in trace.steps if step.outcome and step.action.worker == 2)
    positions = step_positions(trace)
    assert gap.start < positions[w2_write.number - 1] < positions[late.number - 1] == gap.end
    assert gap.closed_by == GAP_CLOSED_WITH_NOTHING_TO_SEND


@settings(max_examples=40, deadline=None)
@given(PICKS, st.sampled_from(sorted(PRESETS)))
def test_random_runs_keep_time_on_the_axis(picks: list[int], preset: str) -> None:
    trace = _random_run(PRESETS[preset].design, picks)
    positions = step_positions(trace)
    for step, x in zip(trace.steps, positions, strict=True):
        now = trace.state_at(step.number - 1)["now"]
        assert (x == now + 1) if step.action.name == "Tick" else (now < x < now + 1)
    ends = {x for step, x in zip(trace.steps, positions, strict=True) if step.action.name == "Tick"}
    segments = lease_segments(trace)
    right = timeline_figure(trace).layout.xaxis.range[1]
    renewals = [
        (step.action.worker, x, trace.state_at(step.number - 1)["now"])
        for step, x in zip(trace.steps, positions, strict=True)
        if step.action.name == "Renew"
    ]
    grants = {
        x for step, x in zip(trace.steps, positions, strict=True) if step.action.name == "Acquire"
    }
    for lease in (s for s in segments if s.status == LEASE_ACTIVE):
        if trace.design.expiry == "never":  # no lease: held from its grant until let go
            assert lease.start in grants and lease.end <= right
            continue
        tick = int(lease.start)  # the tick it was granted in
        earlier = {s.end for s in segments if s.worker == lease.worker and s.end <= lease.start}
        assert lease.start == tick or lease.start in earlier  # after its own last grant's end
        renewed = [
            now for w, x, now in renewals if w == lease.worker and lease.start < x < lease.end
        ]
        since = max([tick, *renewed])  # the tick of its grant or of its last renewal
        assert lease.end - since <= trace.bounds.lease
        if lease.end in ends:  # it ran out as time passed: exactly L ticks from that tick
            assert lease.end - since == trace.bounds.lease
    assert right == trace.state_at(len(trace.steps))["now"] + 1
    assert all(0 <= g.start <= g.end <= right for g in gaps(trace))


# ----- legend --------------------------------------------------------------------------------


def test_the_legend_names_each_meaning_once_with_the_drawn_symbol() -> None:
    trace = paused_worker_story("none").trace()
    figure = timeline_figure(trace, len(trace.steps))
    names = _legend(figure)
    assert len(names) == len(set(names))
    expected = {"grant", "send", "release", "clock tick", "lease", "past its lease"}
    expected |= {"✔ accepted", "! violating", "in the network", "paused", "gap", "current step"}
    assert set(names) == expected
    entries = {t.name: t for t in figure.data if t.showlegend is not False}
    for data in figure.data:
        if data.showlegend is False and data.mode and "markers" in data.mode:
            entry = entries.get(data.name)
            if entry is not None:
                assert entry.marker.symbol == data.marker.symbol, data.name
    uids = [t.uid for t in figure.data]  # the browser updates each trace in place by its uid
    assert len(set(uids)) == len(uids)
    assert entries["send"].marker.symbol == "triangle-right"
    assert entries["release"].marker.symbol == "square"
    assert entries["grant"].marker.symbol == "diamond"


def test_the_legend_lists_rejected_read_and_checked_only_when_drawn() -> None:
    fenced = timeline_figure(paused_worker_story("fenced").trace())
    assert "✘ rejected" in _legend(fenced) and "! violating" not in _legend(fenced)
    rmw = replay(
        PRESETS["rmw-fencing-unfenced-reads"].design,
        REFERENCE_BOUNDS,
        [Action("Acquire", 1), Action("Send", 1), Action("Deliver", 1)],
    )
    assert "↩ read" in _legend(timeline_figure(rmw))
    split = replay(
        Design(receiver=Receiver.FENCED_NONATOMIC),
        PAUSED_WORKER_BOUNDS,
        [Action("Acquire", 1), Action("Send", 1), Action("Check", 1), Action("Apply", 1)],
    )
    assert {"… checked", "✔ accepted"} <= set(_legend(timeline_figure(split)))


# ----- size, validity ------------------------------------------------------------------------


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


def test_a_60_step_figure_is_one_picture_of_few_traces() -> None:
    trace = _sixty_steps()
    figure = timeline_figure(trace, 30)
    assert not figure.frames
    assert len(figure.data) <= 40
    assert len(_lease_bars(timeline_figure(trace), "lease")) == 8
    assert _arrow_count(timeline_figure(trace)) == len(messages(trace)) == 15
    assert list(figure.layout.xaxis.range) == [0.0, 16.0]


@pytest.mark.parametrize("upto", [None, 0, 5, 9])
def test_the_figure_passes_plotly_validation(upto: int | None) -> None:
    for trace in (paused_worker_story("none").trace(), _stale_after_expiry()):
        figure = timeline_figure(trace, upto=upto)
        go.Figure(figure.to_dict())  # built unvalidated for speed: check every attribute once


# ----- the state table in words --------------------------------------------------------------

JARGON = ("tok[", "gid[", "pending[", "sent[", "(ghost)", "hwm", "lastg", "holder=")


def test_the_state_table_speaks_in_words_first() -> None:
    trace = _stale_after_expiry()
    for position in range(len(trace.steps) + 1):
        for row in actor_rows(trace, position):
            assert not any(word in row.words for word in JARGON), row.words
    rows = {row.actor: row for row in actor_rows(trace, 5)}
    assert rows["W1"].words.startswith(
        "believes it holds token 1 (grant #1), but grant #1 was superseded by grant #2 (W2); "
        "a write in flight"
    )
    assert rows["W2"].words.startswith("believes it holds token 2 (grant #2), lease current")
    assert rows["coordinator"].words.startswith("lock granted to W2 (grant #2), lease until t=4")
    assert "tok[1]=1" in rows["W1"].variables and "pending[1]=1" in rows["W1"].variables
    assert "gid[1]=1 (model only)" in rows["W1"].variables
    assert not any("(ghost)" in row.variables for row in rows.values())
    assert rows["clock"].words == "the time is t=2"
    assert actor_rows(trace, 8)[-1].words.startswith("highest token seen: 2")


def test_the_state_table_words_follow_the_lease_predicates() -> None:
    trace = _stale_after_expiry()
    w1 = next(row.words for row in actor_rows(trace, 4) if row.actor == "W1")
    assert "but its lease expired at t=2" in w1  # t=2, nobody else granted yet
    assert actor_rows(trace, 0)[2].words == "does not hold the lock"
    assert "no token seen yet" in actor_rows(trace, 0)[-1].words
    rejected = paused_worker_story("fenced").trace()
    assert actor_rows(rejected, 8)[2].words == "does not hold the lock"  # gave up after refusal


def test_a_renewed_lease_is_drawn_to_its_last_renewal() -> None:
    """A keepalive moves the end of the bar: granted at t=0, renewed at t=1, it runs to t=3."""
    actions = [Action("Acquire", 1), Action("Tick"), Action("Renew", 1), Action("Tick")]
    trace = replay(Design(renew=True), REFERENCE_BOUNDS, actions)
    w1 = next(s for s in lease_segments(trace) if s.worker == 1)
    assert (w1.start, w1.end) == (0.0, 3.0)


def test_a_lock_without_a_lease_is_drawn_to_now_and_a_crash_on_its_worker() -> None:
    """With no expiry the bar runs to the current step; the crash sits on the worker's lane."""
    actions = [Action("Acquire", 1), Action("Crash", 1), Action("Tick"), Action("Tick")]
    trace = replay(Design(expiry="never", crashes=1), REFERENCE_BOUNDS, actions)
    w1 = next(s for s in lease_segments(trace) if s.worker == 1)
    assert w1.start == step_positions(trace)[0]  # held from its grant: no lease counts ticks
    assert w1.end == step_positions(trace)[-1] > 1.0
    assert [e.lane for e in events(trace)] == ["coordinator", "W1", "clock", "clock"]
    timeline_figure(trace).to_dict()


def test_the_state_table_says_who_crashed_and_that_the_lock_has_no_lease() -> None:
    """After a grant and a crash on a lock without a lease, the rows say so in words."""
    actions = [Action("Acquire", 1), Action("Tick"), Action("Crash", 1)]
    trace = replay(Design(expiry="never", crashes=1), REFERENCE_BOUNDS, actions)
    rows = {row.actor: row for row in actor_rows(trace, len(actions))}
    assert rows["coordinator"].words.startswith(
        "lock granted to W1 (grant #1), no lease: held until released"
    )
    assert rows["W1"].words.startswith(
        "crashed at t=1, takes no step again; believes it holds token 1 (grant #1), held until "
        "it releases it (the lock has no lease)"
    )
    assert "down[1]=2" in rows["W1"].variables
    assert rows["W2"].words == "does not hold the lock"


def test_renewals_and_crashes_have_their_own_markers_in_the_legend() -> None:
    """A renewal and a crash are drawn with their own symbols, named once in the legend."""
    actions = [Action("Acquire", 1), Action("Tick"), Action("Renew", 1), Action("Crash", 1)]
    trace = replay(Design(renew=True, crashes=1), REFERENCE_BOUNDS, actions)
    figure = timeline_figure(trace, len(actions))
    entries = {t.name: t for t in figure.data if t.showlegend is not False}
    assert entries["renewal"].marker.symbol == "triangle-up"
    assert entries["crash"].marker.symbol == "x"


# ----- readable text ---------------------------------------------------------------------------


def test_captions_are_drawn_at_body_text_contrast() -> None:
    """The page style sets the caption opacity; blended on the page it reaches 4.5:1, where
    Streamlit's own 0.6 does not."""
    from webapp.show.style import (
        CAPTION_OPACITY,
        MIN_CONTRAST,
        PAGE_BACKGROUND,
        PAGE_CSS,
        THEME_TEXT,
        blend,
        contrast_ratio,
    )

    shown = blend(THEME_TEXT, PAGE_BACKGROUND, CAPTION_OPACITY)
    assert contrast_ratio(shown, PAGE_BACKGROUND) >= MIN_CONTRAST
    assert contrast_ratio(blend(THEME_TEXT, PAGE_BACKGROUND, 0.6), PAGE_BACKGROUND) < MIN_CONTRAST
    assert f"opacity: {CAPTION_OPACITY};" in PAGE_CSS
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21)
    assert contrast_ratio(GAP_COLOUR, PAGE_BACKGROUND) >= MIN_CONTRAST  # the gap's label


def test_an_unfenced_read_is_drawn_without_a_token() -> None:
    """Reads without token are labelled and hovered as such; fenced reads show their token."""
    unfenced = _lost_update(PRESETS["rmw-fencing-unfenced-reads"].design)
    fenced = _lost_update(PRESETS["rmw-fencing-fenced-reads"].design)
    for trace, carried in ((unfenced, False), (fenced, True)):
        reads = [m for m in messages(trace) if m.is_read]
        assert reads and all(m.carries_token is carried for m in reads)
        writes = [m for m in messages(trace) if not m.is_read]
        assert writes and all(m.carries_token for m in writes)
        hovers = [message_hover(m) for m in reads]
        assert all(("carrying token" in h) is carried for h in hovers)
        labels = [marker_label(e) for e in events(trace) if e.step.action.name == "Send"]
        assert ("no tok" in labels) is not carried
