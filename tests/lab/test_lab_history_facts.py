"""A lab history as swimlane facts, and the one swimlane drawer that draws them."""

from __future__ import annotations

from lab.report import analyse
from tests.lab.histories import paused_worker
from webapp.draw.swimlane import history_figure, swimlane_figure
from webapp.show.lab_history import PLAIN_EVENTS, STORE_LANE, history_facts
from webapp.show.style import ACCEPTED, REJECTED, VIOLATING
from webapp.show.swimlane import LEASE, PAST_LEASE, PAUSE


def _legends(history_receiver: str, late: str) -> dict[str, int]:
    facts = history_facts(analyse(paused_worker(history_receiver, late)))
    return {group.legend: len(group.marks) for group in facts.groups}


def test_the_paused_worker_has_its_lanes_leases_and_pause() -> None:
    facts = history_facts(analyse(paused_worker("none", "accepted")))
    assert facts.lanes == ("etcd", "W1", "W2", STORE_LANE)
    assert facts.lane_y() == {"etcd": 3.0, "W1": 2.0, "W2": 1.0, STORE_LANE: 0.0}
    kinds = [(bar.lane, bar.kind) for bar in facts.bars]
    assert kinds == [("W1", LEASE), ("W1", PAST_LEASE), ("W2", LEASE), ("W1", PAUSE)]
    pause = next(bar for bar in facts.bars if bar.kind == PAUSE)
    assert (pause.start, pause.end) == (0.11, 1.56)
    assert facts.end == 1.60
    assert [(a.lane, a.to_lane) for a in facts.arrows] == [("W2", STORE_LANE), ("W1", STORE_LANE)]


def test_the_late_write_is_marked_by_what_the_receiver_did_with_it() -> None:
    unfenced = _legends("none", "accepted")
    fenced = _legends("fenced", "rejected")
    violating = f"{VIOLATING.glyph} {VIOLATING.word}"
    rejected = f"{REJECTED.glyph} {REJECTED.word}"
    assert unfenced[violating] == 1 and rejected not in unfenced
    assert fenced[rejected] == 1 and violating not in fenced
    assert unfenced[f"{ACCEPTED.glyph} {ACCEPTED.word}"] == 1  # W2's own write
    assert unfenced[PLAIN_EVENTS] > 0


def test_the_drawer_draws_each_fact_once() -> None:
    report = analyse(paused_worker("none", "accepted"))
    facts = history_facts(report)
    figure = history_figure(report, title="paused worker")
    assert figure.to_plotly_json() == swimlane_figure(facts, "paused worker").to_plotly_json()
    names = [trace.name for trace in figure.data]
    assert names.count("lease") == 2  # one lease trace per worker lane, one legend entry
    assert [t.showlegend for t in figure.data if t.name == "lease"] == [True, False]
    marks = sum(len(group.marks) for group in facts.groups)
    drawn = sum(len(t.x) for t in figure.data if t.mode in ("markers", "markers+text"))
    assert drawn == marks
    assert list(figure.layout.yaxis.ticktext) == [f"<b>{lane}</b>" for lane in facts.lanes]
