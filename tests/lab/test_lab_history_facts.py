"""A lab history as swimlane facts, drawn by the one swimlane drawer that draws model runs:
the same meaning has the same look on both timelines."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import plotly.graph_objects as go

from fencing.stories import paused_worker_story
from lab.report import analyse
from tests.lab.histories import paused_worker
from webapp.draw.swimlane import history_figure, swimlane_figure, timeline_figure
from webapp.show.lab_history import STORE_LANE, gap_spans, history_facts, last_time
from webapp.show.looks import GAP, GRANT, IN_NETWORK, LEASE, PAST_LEASE, PAUSED, SEND, outcome_look
from webapp.show.style import ACCEPTED, REJECTED, VIOLATING
from webapp.show.swimlane import LEASE_BAR, PAST_LEASE_BAR, PAUSE_BAR
from webapp.show.trace_swimlane import trace_facts


def _counts(history_receiver: str, late: str) -> dict[str, int]:
    facts = history_facts(analyse(paused_worker(history_receiver, late)))
    return {group.look.name: len(group.marks) for group in facts.groups}


def test_the_paused_worker_has_its_lanes_leases_and_pause() -> None:
    facts = history_facts(analyse(paused_worker("none", "accepted")))
    assert [lane.name for lane in facts.lanes] == ["etcd", "W1", "W2", STORE_LANE]
    assert facts.lane_y() == {"etcd": 3.0, "W1": 2.0, "W2": 1.0, STORE_LANE: 0.0}
    kinds = [(bar.lane, bar.kind) for bar in facts.bars]
    assert kinds == [
        ("W1", LEASE_BAR),
        ("W1", PAST_LEASE_BAR),
        ("W2", LEASE_BAR),
        ("W1", PAUSE_BAR),
    ]
    labels = [bar.label for bar in facts.bars if bar.kind == LEASE_BAR]
    assert labels == ["lease #1", "lease #2"]
    pause = next(bar for bar in facts.bars if bar.kind == PAUSE_BAR)
    assert (pause.start, pause.end) == (0.11, 1.56)
    assert "0.110 s to 1.560 s" in pause.hover
    assert last_time(analyse(paused_worker("none", "accepted"))) == 1.60
    assert facts.axis.right > 1.60 and facts.axis.ticks == ()
    routes = [(r.lane, r.to_lane) for r in facts.requests]
    assert routes == [("W2", STORE_LANE), ("W1", STORE_LANE)]
    late = facts.requests[-1]
    past = next(bar for bar in facts.bars if bar.kind == PAST_LEASE_BAR)
    assert pause.end < late.sent < late.end <= past.end  # W1 writes on after its lease ended


def test_the_late_write_is_marked_by_what_the_receiver_did_with_it() -> None:
    unfenced = _counts("none", "accepted")
    fenced = _counts("fenced", "rejected")
    violating, rejected = outcome_look(VIOLATING).name, outcome_look(REJECTED).name
    assert unfenced[violating] == 1 and rejected not in unfenced
    assert fenced[rejected] == 1 and violating not in fenced
    assert unfenced[outcome_look(ACCEPTED).name] == 1  # W2's own write
    assert unfenced[GRANT.name] == 2 and unfenced[SEND.name] == 2


def test_the_legend_names_what_the_history_draws_once() -> None:
    facts = history_facts(analyse(paused_worker("none", "accepted")))
    names = [look.name for look in facts.legend]
    assert len(names) == len(set(names))
    assert {LEASE.name, PAST_LEASE.name, PAUSED.name, IN_NETWORK.name, GRANT.name} <= set(names)
    assert "current step" not in names  # a history is shown whole, never stepped


def _marker_traces(figure: go.Figure) -> dict[str, Any]:
    """The figure's marker traces by name (one per look; their words are drawn apart)."""
    return {
        t.name: t
        for t in figure.data
        if t.mode == "markers"
        and t.showlegend is False
        and t.name == t.legendgroup
        and t.name != "current step"
    }


def test_the_drawer_draws_each_fact_once() -> None:
    report = analyse(paused_worker("none", "accepted"))
    facts = history_facts(report, "paused worker")
    figure = history_figure(report, title="paused worker")
    assert figure.to_plotly_json() == swimlane_figure(facts).to_plotly_json()
    lease_traces = [t.name for t in figure.data if t.legendgroup == LEASE.name and t.fill]
    assert lease_traces == ["W1 lease", "W2 lease"]  # one polygon trace per lane
    legend = [t.name for t in figure.data if t.showlegend is not False]
    assert legend == [look.name for look in facts.legend]
    drawn = {name: len(t.x) for name, t in _marker_traces(figure).items()}
    assert drawn == {group.look.name: len(group.marks) for group in facts.groups}
    assert list(figure.layout.yaxis.ticktext) == [f"<b>{lane.name}</b>" for lane in facts.lanes]
    arrows = sum(len(t.x) // 3 for t in figure.data if t.name.endswith(" arrows"))
    assert arrows == len(facts.requests)
    go.Figure(figure.to_dict())  # built unvalidated for speed: every attribute checked once


def test_a_model_run_and_a_real_run_draw_the_same_meaning_alike() -> None:
    """The late write the unfenced store takes and the one a fenced store refuses look the
    same on the model's timeline and on the real history's."""
    for receiver, late in (("none", "accepted"), ("fenced", "rejected")):
        real = _marker_traces(history_figure(analyse(paused_worker(receiver, late))))
        model = _marker_traces(timeline_figure(paused_worker_story(receiver).trace()))
        shared = set(real) & set(model)
        assert {GRANT.name, SEND.name} <= shared
        assert (outcome_look(VIOLATING if late == "accepted" else REJECTED).name) in shared
        for name in shared:
            assert real[name].marker.symbol == model[name].marker.symbol, name
            assert real[name].marker.size == model[name].marker.size, name


def test_a_model_run_is_drawn_from_its_facts() -> None:
    trace = paused_worker_story("fenced").trace()
    for upto in (None, 0, 3, len(trace.steps)):
        drawn = timeline_figure(trace, upto).to_plotly_json()
        assert drawn == swimlane_figure(trace_facts(trace, upto)).to_plotly_json()


def test_the_models_gap_is_drawn_on_the_real_times_of_its_events() -> None:
    """The model's replay of the unfenced history has its gap from W1's lease end to W1's
    late write; on the real timeline it runs from etcd's revocation of W1's lease (1.50 s)
    to the store's decision on that write (1.58 s), which lands inside it."""
    report = analyse(paused_worker("none", "accepted"))
    (gap,) = history_facts(report).spans
    revoked = next(g.ended for g in report.line.grants.values() if g.worker == 1)
    late = report.line.events[-2]  # the store's decision on W1's late write
    assert (gap.start, gap.end) == (revoked, late.t) == (1.50, 1.58)
    assert gap.start < late.t <= gap.end
    assert "W1's grant #1 is no longer the current lease" in gap.hover
    assert GAP in history_facts(report).legend


def test_under_fencing_the_real_gap_closes_when_the_store_sees_the_newer_token() -> None:
    report = analyse(paused_worker("fenced", "rejected"))
    (gap,) = history_facts(report).spans
    w2_write = next(e for e in report.line.events if e.kind == "deliver" and e.worker == 2)
    w1_write = next(e for e in report.line.events if e.kind == "deliver" and e.worker == 1)
    assert (gap.start, gap.end) == (1.50, w2_write.t)
    assert w1_write.t > gap.end  # W1's write comes after the gap: the store refuses it
    assert "until the receiver saw a newer token" in gap.hover


def test_a_history_the_model_did_not_replay_whole_has_no_gap_drawn() -> None:
    report = analyse(paused_worker("none", "accepted"))
    unreplayed = replace(report, conformance=replace(report.conformance, trace=None))
    assert gap_spans(unreplayed) == ()
    assert history_facts(unreplayed).span_room is False
