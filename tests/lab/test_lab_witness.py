"""The cross-checks of a lab history's witnesses, on hand-made histories: one case per
refusal (each with the exact sentence), each against an allowed control; P1 and P3 against
the highest token and newest grant; a write accepted between a revocation and the next
grant; writes of unknown outcome; the exit status of `fencing replay`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from fencing.cli import main
from lab.checker import check_properties
from lab.history import History, history_from_dict, history_to_json, timeline
from lab.report import analyse
from lab.settings import LabInputError, Settings
from lab.witness import cross_check
from tests.lab.histories import (
    deliver,
    final_read,
    grant,
    nemesis,
    paused_worker,
    release,
    reply,
    revoked,
    send,
    storage_start,
    watch_put,
    witnessed,
)


def paused(start: float, stopped: float, end: float, w: int = 2) -> list[dict[str, Any]]:
    """The nemesis stops W at `start` (SIGSTOP delivered by `stopped`) and resumes it at `end`."""
    return [nemesis(start, "pause", w) | {"stopped_at": stopped}, nemesis(end, "resume", w)]


def accepted2(**fields: Any) -> dict[str, Any]:
    """W2's write as the store records it, with some fields changed."""
    base = {
        "value": 2_000_001,
        "mark_before": 2,
        "mark_after": 4,
        "version_before": 1,
        "version_after": 2,
    }
    return deliver(0.33, 2, 1, 4, 4, "accepted", **{**base, **fields})


CATALOGUE: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "double grant",
        {"release1": None, "delete1": None, "final": final_read(1.6, 2_000_001, 2, 4, [2])},
        "double-grant",
        "etcd granted the lock to W2 (create revision 4) at 0.300 s while W1's key (create "
        "revision 2) had not been deleted: two holders at once",
    ),
    (
        "lease revoked 0.2 s into a 1 s TTL",
        {"revoke2": revoked(0.49, 2, 4, 5)},
        "lease-early",
        "etcd ended W2's lease (grant 4) at 0.490 s, 0.200 s after it was asked for: before "
        "its TTL of 1 s",
    ),
    (
        "lease revoked far past its TTL",
        {"revoke2": revoked(5.0, 2, 4, 5), "final": final_read(5.1, 2_000_001, 2, 4, [])},
        "lease-late",
        "etcd ended W2's lease (grant 4) at 5.000 s, 4.700 s after the grant: later than its "
        "TTL of 1 s plus the 1.000 s allowed (etcd's lessor looks for expired leases every "
        "500 ms, plus the run's latency of 0.500 s)",
    ),
    (
        "an earlier revision observed 1.5 s after a later one",
        {"release1": release(1.80, 1, 2, True, 3), "delete1": revoked(1.80, 1, 2, 3)},
        "revision-order",
        "etcd ordered the release of W1 (revision 3) before the grant of W2, but it was "
        "observed 1.500 s later: more than one request's latency (0.500 s)",
    ),
    (
        "a worker sends while stopped",
        {"extra": paused(0.31, 0.311, 0.50)},
        "sent-while-paused",
        "W2 recorded 'send' at 0.320 s while it was stopped (SIGSTOP at 0.311 s, SIGCONT at "
        "0.500 s)",
    ),
    (
        "the store's mark above the token it accepted",
        {"deliver2": accepted2(mark_after=5), "final": final_read(1.6, 2_000_001, 2, 5, [])},
        "mark-token",
        "the store recorded mark 5 after accepting W2's write W2-1 with token 4 at 0.330 s: "
        "accepting a write sets the mark to its token",
    ),
    (
        "the store's mark is not the one it last set",
        {"deliver2": accepted2(mark_before=3)},
        "mark-drift",
        "the store recorded mark 3 before W2's write W2-1 at 0.330 s, but the last write it "
        "accepted set the mark to 2",
    ),
    (
        "a durable mark comes back as 0",
        {
            "extra": [
                {"t": 0.25, "source": "lab", "kind": "storage-kill", "incarnation": 1},
                storage_start(0.26, incarnation=2, mark=0),
            ],
            "deliver2": accepted2(mark_before=0),
        },
        "mark-restart",
        "the storage process (incarnation 2) started at 0.260 s with mark 0, but its durable "
        "mark was 2",
    ),
    (
        "the store says it ran another receiver",
        {"start": storage_start(0.01, receiver="none")},
        "receiver",
        "the storage process says it ran receiver 'none' at 0.010 s, but the run's settings "
        "say 'fenced'",
    ),
    (
        "a reply that contradicts the decision",
        {"reply2": reply(0.34, 2, 1, "rejected")},
        "reply-contradicts",
        "W2 heard 'rejected' for request W2-1 at 0.340 s, but the store's log decided "
        "'accepted' at 0.330 s",
    ),
    (
        "a reply to a request the store never decided",
        {"extra": [send(0.15, 1, 2, 2, 2, op="read"), reply(0.16, 1, 2, "read", version=1)]},
        "reply-undecided",
        "W1 heard 'read' for request W1-2 at 0.160 s, but the store's log never decided that "
        "request",
    ),
    (
        "a data version that goes back",
        {
            "deliver2": accepted2(version_before=0, version_after=1),
            "final": final_read(1.6, 2_000_001, 1, 4, []),
        },
        "version-back",
        "the store served W2's write W2-1 at version 0 at 0.330 s, but the data was already at "
        "version 1: versions never go back",
    ),
    (
        "an accepted write that changed nothing",
        {
            "deliver2": accepted2(version_before=1, version_after=1),
            "final": final_read(1.6, 2_000_001, 1, 4, []),
        },
        "version-step",
        "W2's write W2-1 was accepted at 0.330 s at version 1 and changed nothing: an accepted "
        "write adds exactly one to the version",
    ),
    (
        "a version that jumps without a write",
        {
            "deliver2": accepted2(version_before=3, version_after=4),
            "final": final_read(1.6, 2_000_001, 4, 4, []),
        },
        "version-gap",
        "the store served W2's write W2-1 at version 3 at 0.330 s, but the last write it "
        "accepted left version 1, and no write of unknown outcome explains the difference",
    ),
    (
        "the final version is not the accepted writes'",
        {"final": final_read(1.6, 2_000_001, 5, 4, [])},
        "final-version",
        "the final read of the data found version 5, but the accepted writes leave version 2",
    ),
    (
        "the final value is not the last accepted write's",
        {"final": final_read(1.6, 7, 2, 4, [])},
        "final-value",
        "the final read of the data found value 7, but the last accepted write wrote 2000001",
    ),
    (
        "a durable mark that reads back as 0 at the end",
        {"final": final_read(1.6, 2_000_001, 2, 0, [])},
        "final-mark",
        "the final read of the durable mark found 0, but the last accepted write set it to 4",
    ),
    (
        "a lock key the history says was deleted",
        {"final": final_read(1.6, 2_000_001, 2, 4, [4])},
        "final-locks",
        "etcd's lock keys at the end have create revisions [4], but the history leaves none "
        "undeleted",
    ),
]


def test_the_control_is_consistent_and_the_model_allows_it() -> None:
    report = analyse(witnessed())
    assert report.witnessed.impossible == () and report.witnessed.unknown == ()
    assert report.conformance.allowed and not report.refused
    assert "consistent: no contradiction between the witnesses" in report.text()


@pytest.mark.parametrize(
    ("changes", "code", "reason"), [c[1:] for c in CATALOGUE], ids=[c[0] for c in CATALOGUE]
)
def test_each_contradiction_is_refused_with_its_reason(
    changes: dict[str, Any], code: str, reason: str
) -> None:
    found = cross_check(timeline(witnessed(**changes))).impossible
    assert {f.code for f in found} == {code}, found
    assert found[0].reason == reason
    report = analyse(witnessed(**changes))
    assert report.refused and f"✗ [{code}] {reason}" in report.text()


@pytest.mark.parametrize(
    ("what", "changes"),
    [
        ("a pause with no step of W2 inside", {"extra": paused(0.35, 0.351, 0.50)}),
        ("a reply recorded before SIGSTOP took hold", {"extra": paused(0.339, 0.3405, 0.50)}),
        ("a revocation 1.4 s after the grant", {"revoke2": revoked(1.70, 2, 4, 5)}),
        (
            "an earlier revision observed a little later",
            {"release1": release(0.32, 1, 2, True, 3), "delete1": revoked(0.32, 1, 2, 3)},
        ),
        (
            "a volatile-looking restart that keeps the durable mark",
            {
                "extra": [
                    {"t": 0.25, "source": "lab", "kind": "storage-kill", "incarnation": 1},
                    storage_start(0.26, incarnation=2, mark=2),
                ]
            },
        ),
        (
            "a release whose worker was stopped before it heard the answer",
            {
                "release1": None,
                "extra": [
                    {"t": 0.19, "source": "W1", "kind": "invoke", "worker": 1, "op": "release"}
                    | {"grant": 2}
                ],
            },
        ),
        (
            "a lock key read while the watch lagged behind etcd",
            {"final": final_read(1.6, 2_000_001, 2, 4, [4]) | {"watch": False}},
        ),
        (
            "a lock key still held at the end",
            {"revoke2": None, "final": final_read(1.6, 2_000_001, 2, 4, [4])},
        ),
    ],
)
def test_controls_close_to_each_refusal_are_allowed(what: str, changes: dict[str, Any]) -> None:
    assert cross_check(timeline(witnessed(**changes))).impossible == (), what


def test_a_partial_history_whose_watch_stopped_early_is_not_a_double_grant() -> None:
    """The run stopped before the watch reported W1's release: W2's grant, recorded by W2
    after the watch's last report, is no double grant; in a finished run it is (and a grant
    the watch never saw)."""
    changes = {
        "release1": None,
        "delete1": None,
        "put2": None,
        "revoke2": None,
        "final": None,
    }
    history = witnessed(**changes)
    found = cross_check(timeline(history)).impossible
    assert [f.code for f in found] == ["double-grant", "grant-unrecorded"]
    stopped = dataclasses.replace(history, partial="interrupted by SIGINT 0.4 s into the run")
    assert cross_check(timeline(stopped)).impossible == ()


def test_p1_counts_against_the_highest_accepted_token_and_p3_the_newest_grant() -> None:
    """Tokens 6, 2, 4 accepted by a plain store: 4 is higher than the last (2) but lower than
    the highest (6), so P1 and P3 each break twice."""
    events = []
    for n, (w, revision) in enumerate(((1, 6), (2, 2), (1, 4)), start=1):
        events += [
            send(0.1 * n, w, n, revision, revision),
            deliver(0.1 * n + 0.01, w, n, revision, revision, "accepted"),
        ]
    grants = [grant(0.01, 2, 2), grant(0.02, 1, 4), grant(0.03, 1, 6)]
    line = timeline(History("t", Settings(), (*grants, *events)))
    verdicts = check_properties(line)
    assert [v.t for v in verdicts["P1"].violations] == [0.21, 0.31]
    assert (
        "lower than token 6 accepted before (W1 at 0.110 s)" in verdicts["P1"].violations[1].reason
    )
    assert [v.t for v in verdicts["P3"].violations] == [0.21, 0.31]
    assert "older than grant #3" in verdicts["P3"].violations[1].reason
    model_way = check_properties(line, against_last=True)  # the model's ghosts: the last write
    assert (model_way["P1"].count, model_way["P3"].count) == (1, 1)


def gap_write(accepted_at: float) -> History:
    """W1's lease is revoked at 1.40 s and W2 is granted at 1.60 s; W1's write lands at
    `accepted_at` with a plain store."""
    events = (
        grant(0.10, 1, 2, asked=0.09),
        watch_put(0.101, 1, 2),
        send(0.20, 1, 1, 2, 2),
        revoked(1.40, 1, 2, 3),
        deliver(accepted_at, 1, 1, 2, 2, "accepted"),
        grant(1.60, 2, 4, asked=1.59),
        watch_put(1.601, 2, 4),
    )
    return History("gap", Settings(), events)


def test_a_write_accepted_after_its_revocation_and_before_the_next_grant_breaks_p2() -> None:
    """The gap between etcd's revocation and the next grant is outside every lease: a write
    accepted there counts against P2, named by the revocation."""
    late = check_properties(timeline(gap_write(1.50)))["P2"]
    assert late.count == 1
    assert late.violations[0].reason == (
        "W1's write at 1.500 s lands outside its lease: etcd revoked its lease at 1.400 s"
    )
    assert check_properties(timeline(gap_write(0.30)))["P2"].count == 0  # inside the lease


def store_killed(final: dict[str, Any] | None) -> History:
    """W2's write is in flight when the store is killed; W2 hears nothing (info); the store
    starts again with its durable mark; then the final read (or none)."""
    kill = {"t": 0.325, "source": "lab", "kind": "storage-kill", "incarnation": 1}
    info = {
        "t": 0.326,
        "source": "W2",
        "kind": "info",
        "worker": 2,
        "op": "write",
        "request": "W2-1",
        "error": "the storage process closed the connection",
    }
    changes: dict[str, Any] = {
        "deliver2": None,
        "reply2": None,
        "revoke2": revoked(1.45, 2, 4, 5),
        "final": final,
        "extra": [kill, info, storage_start(0.33, incarnation=2, mark=2)],
    }
    return witnessed(**changes)


@pytest.mark.parametrize(
    ("final", "decided"),
    [
        (final_read(1.6, 1_000_001, 1, 2, []), "not applied"),
        (final_read(1.6, 2_000_001, 2, 4, []), "applied"),
        (None, None),
    ],
    ids=["final read: not applied", "final read: applied", "no final read"],
)
def test_a_write_of_unknown_outcome_is_indeterminate_and_the_model_allows_both(
    final: dict[str, Any] | None, decided: str | None
) -> None:
    report = analyse(store_killed(final))
    assert report.witnessed.impossible == ()
    (write,) = report.witnessed.unknown
    assert (write.worker, write.request, write.decided) == (2, "W2-1", decided)
    (outcome,) = report.conformance.unknown
    assert (outcome.applied, outcome.not_applied) == (True, True)
    assert report.conformance.allowed and not report.refused
    text = report.text()
    assert "W2's write W2-1 (sent at 0.320 s) is indeterminate: its reply never came" in text
    if decided:
        assert f"says it was {decided}" in text
    else:
        assert "whether or not W2's write W2-1 was applied" in report.conformance.verdict()


def test_a_worker_that_acquires_again_after_an_unknown_outcome_is_refused_for_that() -> None:
    """The real worker retires after `info`; a history in which it asks for the lock again is
    refused with the model's reason: its request is still in flight there."""
    history = store_killed(None)
    again = (grant(1.50, 2, 6, asked=1.49), watch_put(1.501, 2, 6))
    result = analyse(dataclasses.replace(history, events=(*history.events, *again))).conformance
    assert result.refused is not None and result.refused.action == "Acquire(W2)"
    assert result.refused.reason == (
        "in the model W2's request under grant #2 (token 2) is still in flight, so W2 still "
        "holds that grant; a worker whose request never got its answer takes no step after "
        "it (it retires)"
    )


def test_a_final_version_beyond_every_possibility_is_refused() -> None:
    found = cross_check(timeline(store_killed(final_read(1.6, 2_000_001, 3, 4, [])))).impossible
    assert [f.reason for f in found] == [
        "the final read of the data found version 3, but the accepted writes leave version 1 "
        "(or up to 2 with the writes of unknown outcome)"
    ]


def write_history(tmp_path: Path, history: History) -> Path:
    """The history as a file."""
    path = tmp_path / "history.json"
    path.write_text(history_to_json(history))
    return path


@pytest.mark.parametrize(
    ("history", "status"),
    [
        (witnessed(), 0),
        (paused_worker("none", "accepted"), 0),  # violations the model predicts: the lesson
        (store_killed(None), 0),
        (witnessed(revoke2=revoked(0.49, 2, 4, 5)), 1),  # the witnesses contradict each other
        (paused_worker("fenced", "accepted"), 1),  # the model refuses the store's decision
    ],
    ids=["consistent", "violations predicted", "unknown outcome", "contradiction", "model refuses"],
)
def test_fencing_replay_exits_1_when_it_refuses_a_history(
    history: History, status: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(write_history(tmp_path, history))]) == status
    captured = capsys.readouterr()
    assert ("fencing: the history is refused:" in captured.err) == (status == 1)
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"kind": "info", "op": "fly"}, "bad client operation 'fly'"),
        ({"kind": "pause", "stopped_at": "soon"}, "'stopped_at' must be a number of seconds"),
        (
            {"kind": "deliver", "token": 1, "grant": 1, "mark_after": 1.5},
            "'mark_after' must be a whole number",
        ),
        ({"kind": "final-read", "data": [1]}, "field 'data' must be an object"),
        (
            {"kind": "final-read", "data": {"version": "2"}},
            "the final read's 'version' must be a whole number",
        ),
        ({"kind": "final-read", "locks": {"a": 1}}, "'locks' must be a list of keys"),
        ({"kind": "final-read", "watch": "yes"}, "'watch' must be true or false"),
        (
            {"kind": "final-read", "locks": [{"lease": True}]},
            "a lock key's 'lease' must be a whole number",
        ),
    ],
)
def test_bad_witness_fields_are_refused_in_one_line(
    event: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = witnessed().to_dict()
    data["events"].append({"t": 2.0, "source": "lab", "worker": 1, **event})
    with pytest.raises(LabInputError, match=message):
        history_from_dict(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_bad_measured_figures_are_refused() -> None:
    data = {**witnessed().to_dict(), "measured": {"request_seconds": -1}}
    with pytest.raises(
        LabInputError,
        match="measured figures: field 'request_seconds' must be a number of seconds from 0",
    ):
        history_from_dict(data)
    data["measured"] = {"request_seconds": 0.01, "revocation_seconds": 0.4}
    assert history_from_dict(data).measured == {"request_seconds": 0.01, "revocation_seconds": 0.4}


def test_the_side_by_side_table_says_which_history_was_refused() -> None:
    from lab.cli import side_by_side

    table = side_by_side([analyse(witnessed()), analyse(witnessed(revoke2=revoked(0.49, 2, 4, 5)))])
    rows = table.splitlines()[2:]
    assert [row.split()[-1] for row in rows] == ["ok", "REFUSED"]


def test_a_lease_refusal_names_the_lock_service_that_revoked_the_lease() -> None:
    """The same late revocation, recorded on etcd's lock API, is told in that service's name."""
    history = witnessed(revoke2=revoked(5.0, 2, 4, 5), final=final_read(5.1, 2_000_001, 2, 4, []))
    api = dataclasses.replace(history.settings, lock_service="etcd-lock-api")
    on_api = dataclasses.replace(history, settings=api)
    found = cross_check(timeline(on_api)).impossible
    assert [f.code for f in found] == ["lease-late"], found
    assert found[0].reason.startswith("etcd's lock API ended W2's lease (grant 4) at 5.000 s")
