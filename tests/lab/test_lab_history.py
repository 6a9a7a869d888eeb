"""The history checker, the merged order and the conformance replay on hand-made histories
(no etcd): each property's verdict, each refusal reason, the bounds, and bad files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fencing.cli import main
from lab.checker import check_properties, count_writes
from lab.conformance import check_conformance, choose_mapping
from lab.history import History, history_from_json, history_to_json, timeline
from lab.report import analyse
from lab.settings import LabInputError, Settings
from tests.lab.histories import (
    deliver,
    grant,
    paused_worker,
    release,
    revoked,
    send,
    watch_put,
)


def counts(history: History) -> dict[str, int]:
    """Violations per property found by the history checker alone."""
    return {name: verdict.count for name, verdict in check_properties(timeline(history)).items()}


def test_the_paused_workers_late_write_breaks_p1_p2_p3_with_a_plain_store() -> None:
    report = analyse(paused_worker("none", "accepted"))
    assert {n: v.count for n, v in report.properties.items()} == {
        "P1": 1,
        "P2": 1,
        "P3": 1,
        "P5": 0,
        "P6": 0,
    }
    p2 = report.properties["P2"].violations[0]
    assert "etcd revoked its lease at 1.500 s" in p2.reason
    assert (report.counts.accepted, report.counts.rejected) == (2, 0)
    assert report.conformance.allowed, report.conformance.verdict()
    assert report.conformance.properties_agree


def test_the_fenced_store_refuses_it_and_nothing_is_violated() -> None:
    report = analyse(paused_worker("fenced", "rejected"))
    assert not any(v.violated for v in report.properties.values())
    assert (report.counts.accepted, report.counts.rejected) == (1, 1)
    assert report.conformance.allowed
    outcomes = [s.outcome for s in report.conformance.trace.steps if s.outcome]  # type: ignore[union-attr]
    assert outcomes == ["accepted", "rejected"]


def test_an_event_time_is_the_earliest_observation_in_etcd_order() -> None:
    """The worker heard of its grant late (paused mid-request): the watch's time wins, and a
    later etcd event seen earlier pulls an earlier revision back before it."""
    events = (
        grant(2.00, 1, 2),  # W1 hears its grant only after a pause
        watch_put(0.30, 1, 2),
        revoked(1.00, 1, 2, 3),  # seen at 1.00 s: so the grant happened before that
        grant(1.05, 2, 4),
        watch_put(1.30, 2, 4),  # the worker heard first this time
    )
    line = timeline(History("t", Settings(), events))
    kinds = [(e.kind, e.worker, e.t) for e in line.events]
    assert kinds == [("grant", 1, 0.30), ("revoked", 1, 1.00), ("grant", 2, 1.05)]
    assert line.grants[2].ended_by == "revoked" and line.grants[2].ended == 1.00


def test_a_deletion_by_the_holder_is_a_release_not_a_revocation() -> None:
    events = (
        grant(0.1, 1, 2),
        release(0.3, 1, 2, True, 3),
        {
            "t": 0.29,
            "source": "lab",
            "kind": "lock-delete",
            "revision": 3,
            "grant": 2,
            "holder": "W1",
        },
    )
    line = timeline(History("t", Settings(), events))
    assert [e.kind for e in line.events] == ["grant", "release"]
    assert line.events[1].t == 0.29
    assert line.grants[2].ended_by == "released"


def test_p3_breaks_with_equal_version_tokens_while_p1_holds() -> None:
    """Key-version tokens are all 1: the older grant's late write passes a fenced store."""
    history = paused_worker("fenced", "accepted")
    events = [dict(e) for e in history.events]
    for event in events:
        if "token" in event:
            event["token"] = 1
    history = replace(
        history, settings=Settings(receiver="fenced", token="version"), events=tuple(events)
    )
    assert counts(history) == {"P1": 0, "P2": 1, "P3": 1, "P5": 0, "P6": 0}
    assert analyse(history).conformance.allowed


def test_p5_finds_the_update_lost_between_a_read_and_a_write() -> None:
    settings = Settings(receiver="fenced", workload="rmw")
    events = (
        grant(0.1, 1, 2),
        send(0.11, 1, 1, 2, 2, op="read"),
        deliver(0.12, 1, 1, 2, 2, "read", op="read", version_before=0),
        send(0.13, 1, 2, 2, 2, value=1, read_version=0),
        revoked(1.5, 1, 2, 3),
        grant(1.52, 2, 4),
        send(1.53, 2, 1, 4, 4, op="read"),
        deliver(1.54, 2, 1, 4, 4, "read", op="read", version_before=0),
        send(1.55, 2, 2, 4, 4, value=1, read_version=0),
        deliver(1.60, 1, 2, 2, 2, "accepted", read_version=0, version_before=0, mark_before=0),
        deliver(1.61, 2, 2, 4, 4, "accepted", read_version=0, version_before=1, mark_before=2),
    )
    history = History("gap-lost-update", settings, events)
    assert counts(history) == {"P1": 0, "P2": 1, "P3": 0, "P5": 1, "P6": 0}
    report = analyse(history)
    assert report.conformance.allowed and report.conformance.properties_agree
    assert count_writes(report.line.events).reads == 2


def test_a_store_that_accepts_what_the_model_rejects_is_refused_with_the_models_reason() -> None:
    """A fenced store that (wrongly) accepted a lower token: the model names that delivery."""
    result = check_conformance(timeline(paused_worker("fenced", "accepted")))
    assert not result.allowed and result.refused is not None
    assert result.refused.event.kind == "deliver" and result.refused.event.worker == 1
    assert "'accepted'" in result.refused.reason and "'rejected'" in result.refused.reason
    assert "token 1 ≥ highest token seen 2 is false" in result.refused.reason
    assert result.verdict().startswith("the model refuses event")


def test_a_worker_that_drops_its_grant_on_its_own_and_asks_again_is_refused() -> None:
    """With worker checks, a real worker gives up a grant whose TTL passed; the model's worker
    keeps it until a rejection, so its next Acquire is not a step the model allows."""
    settings = Settings(receiver="fenced", worker_check=True)
    events = (
        grant(0.1, 1, 2),
        {"t": 1.2, "source": "W1", "kind": "lease-check", "worker": 1, "passed": False, "grant": 2},
        revoked(1.5, 1, 2, 3),
        grant(1.6, 1, 4),
    )
    result = check_conformance(timeline(History("t", settings, events)))
    assert result.refused is not None and result.refused.action == "Acquire(W1)"
    assert "still holds grant #1" in result.refused.reason


def test_tokens_that_do_not_compare_like_the_models_are_refused() -> None:
    """A key version is 1 for every fresh key; a history whose second grant carries version 2
    does not match the model's key-version tokens (always 1)."""
    events = (
        grant(0.1, 1, 2, token=1),
        send(0.11, 1, 1, 1, 2),
        deliver(0.12, 1, 1, 1, 2, "accepted", mark_before=0, mark_after=1),
        release(0.2, 1, 2, True, 3),
        grant(0.3, 2, 4, token=2),
    )
    settings = Settings(receiver="fenced", token="version")
    result = check_conformance(timeline(History("t", settings, events)))
    assert result.refused is not None and result.refused.action == "Acquire(W2)"
    assert "token 2 is higher than W1's earlier token 1" in result.refused.reason
    assert "equal to the earlier one" in result.refused.reason


def test_a_lease_spans_exactly_l_ticks_from_grant_to_revocation() -> None:
    result = check_conformance(timeline(paused_worker("none", "accepted")))
    trace = result.trace
    assert trace is not None
    acquires = [s for s in trace.steps if s.action.name == "Acquire"]
    first, second = (trace.system.view(s.before).now for s in acquires)
    assert second - first == result.bounds.lease == 2
    assert result.mapping.tick_seconds == pytest.approx((1.50 - 0.10) / 2)


def ten_grants(first: float = 0.0, revision0: int = 2) -> list[dict[str, Any]]:
    """Ten grants in turn to W1 and W2, each one write accepted, then released."""
    events = []
    for n in range(10):
        revision, t = revision0 + 2 * n, first + 0.1 * n
        events += [
            grant(t, 1 + n % 2, revision),
            send(t + 0.01, 1 + n % 2, n, revision, revision),
            deliver(t + 0.02, 1 + n % 2, n, revision, revision, "accepted"),
            release(t + 0.03, 1 + n % 2, revision, True, revision + 1),
        ]
    return events


def test_a_history_beyond_the_models_grants_is_cut_into_segments() -> None:
    """Ten grants are more than the model's 8: the run is cut where the bounds end, and
    the second segment starts from the state the first ended in; all of it is covered."""
    result = check_conformance(timeline(History("random", Settings(), tuple(ten_grants()))))
    assert result.allowed and result.complete, result.verdict()
    assert result.coverage is not None
    assert result.coverage.segments == 2
    assert result.coverage.grants == (10, 10) and result.coverage.writes == (10, 10)
    assert result.coverage.fraction == 1.0
    assert result.verdict() == (
        "the model allows this history, replayed in 2 segments, each from the state the one "
        "before ended in."
    )


def test_a_stale_holder_crosses_the_cut_and_its_late_write_is_checked() -> None:
    """W3 holds a grant from the start and writes at the very end (a paused holder): the
    run is cut after 8 grants, W3's grant and token cross the cut in the rebuilt state, and
    its late write (token 1, below every later one) breaks P1, P2 and P3 in the model as in
    the history."""
    events = [grant(0.0, 3, 1), revoked(0.05, 3, 1, 2), *ten_grants(0.1, 3)]
    events += [send(1.5, 3, 1, 1, 1), deliver(1.51, 3, 1, 1, 1, "accepted")]
    result = check_conformance(timeline(History("random", Settings(workers=3), tuple(events))))
    assert result.allowed and result.complete, result.verdict()
    assert result.coverage is not None and result.coverage.grants == (11, 11)
    assert result.coverage.writes == (11, 11) and result.coverage.segments == 2
    assert result.properties_agree, result.agreement
    assert {name: pair[1] for name, pair in result.agreement.items() if pair[1]} == {
        "P1": 1,
        "P2": 1,
        "P3": 1,
    }


def test_five_workers_over_a_long_run_are_cut_before_the_models_state_numbering() -> None:
    """W=5 with 30 ticks and 8 grants is more states than the model can number, so one
    replay stops there; cut into segments, the whole run is covered."""
    events = []
    for n in range(8):
        revision, t = 2 + 2 * n, 1.5 * n
        w = 1 + n % 5
        events += [
            grant(t, w, revision),
            send(t + 0.01, w, n, revision, revision),
            deliver(t + 0.02, w, n, revision, revision, "accepted"),
            revoked(t + 1.4, w, revision, revision + 1),
            release(t + 1.45, w, revision, False, revision + 1),
        ]
    history = History("random", Settings(workers=5), tuple(events))
    whole = choose_mapping(timeline(history))
    assert whole.limit is not None and "states" in whole.limit
    result = check_conformance(timeline(history))  # cut where a lease has just ended
    assert result.allowed and result.coverage is not None
    assert result.coverage.segments == 2 and result.coverage.grants == (8, 8)


def test_history_files_round_trip_and_bad_ones_get_one_line(tmp_path: Path) -> None:
    history = paused_worker("none", "accepted")
    again = history_from_json(history_to_json(history))
    in_time = tuple(sorted(history.events, key=lambda e: e["t"]))  # a file is read in time order
    assert again.events == in_time and again.settings == history.settings
    for text, message in (
        (b"\xff", "not UTF-8"),
        (b"[1]", "not a lab history"),
        (b'{"format": "fencing-lab/lab-history", "version": 9}', "unsupported lab history version"),
        (
            json.dumps({**history.to_dict(), "events": [{"t": "x", "kind": "grant"}]}).encode(),
            "event 1 \\(grant\\) of the history: field .t. must be a number of seconds",
        ),
        (
            json.dumps({**history.to_dict(), "settings": {"receiver": "magic"}}).encode(),
            "receiver 'magic' is not known",
        ),
    ):
        with pytest.raises(LabInputError, match=message):
            history_from_json(text)


def test_fencing_replay_reads_a_lab_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.json"
    path.write_text(history_to_json(paused_worker("none", "accepted")))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the model allows this history" in out
    assert "P1 monotonic acceptance         VIOLATED 1x" in out
    assert "P1 violated: token 1 is accepted after token 2" in out  # the model's own narration


def test_fencing_replay_refuses_a_broken_lab_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.json"
    data = paused_worker("none", "accepted").to_dict()
    data["events"][3]["kind"] = "explosion"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown kind 'explosion'" in err


def test_a_partial_history_says_so_when_it_is_read_back_and_reported() -> None:
    history = replace(paused_worker("fenced", "rejected"), partial="interrupted by SIGINT")
    again = history_from_json(history_to_json(history))
    assert again.partial == "interrupted by SIGINT"
    assert analyse(again).text().splitlines()[0] == "Partial history: interrupted by SIGINT"
    whole = history_from_json(history_to_json(paused_worker("fenced", "rejected")))
    assert not analyse(whole).text().startswith("Partial")
