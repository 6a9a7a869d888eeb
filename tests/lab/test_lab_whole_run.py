"""A long run is checked from its first event to its last: the witnesses over the whole
history, the model segment by segment, each segment from the state the one before ended
in. A violation planted anywhere (early, across a cut, late) is refused, by the witnesses
and by the model at the planted event; the run without it is allowed and covered whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fencing.cli import main
from lab.history import History, history_to_json, timeline
from lab.report import analyse
from lab.settings import Settings
from lab.witness import cross_check
from tests.lab.histories import (
    deliver,
    final_read,
    grant,
    recorded,
    release,
    reply,
    revoked,
    send,
    watch_put,
)

Event = dict[str, Any]
GRANTS = 30
"""Grants in the long run: nearly four times what one replay of the model may hold."""
STALE = 3
"""The worker that keeps a grant of its own: paused as soon as it is granted the lock, its
lease runs out; its late write is the planted violation."""


def long_run(stale_grant: int | None = None, late_at: int | None = None) -> History:
    """A fenced store, three workers: W1 and W2 take the lock in turn, each writes once and
    releases; with `stale_grant`, W3 instead takes the lock at that grant and is paused until
    its lease runs out; with `late_at` too, W3's write under that old grant is accepted by
    the store after grant number `late_at`, below the mark (impossible for a fenced store)."""
    events: list[Event] = []
    mark = version = 0
    t = 0.1
    request = {1: 0, 2: 0, 3: 0}
    stale: tuple[int, int] | None = None
    for n in range(GRANTS):
        revision = 2 + 3 * n
        w = STALE if n == stale_grant else 1 + n % 2
        events += [
            grant(t, w, revision, asked=round(t - 0.005, 6)),
            watch_put(round(t + 0.001, 6), w, revision),
        ]
        if w == STALE:  # paused at once: its lease runs out, it writes nothing yet
            stale = (revision, 0)
            t = round(t + 1.5, 6)
            events.append(revoked(round(t - 0.45, 6), w, revision, revision + 1))
            continue
        request[w] += 1
        number = request[w]
        events += [
            send(round(t + 0.01, 6), w, number, revision, revision, value=version + 1),
            deliver(
                round(t + 0.02, 6),
                w,
                number,
                revision,
                revision,
                "accepted",
                value=version + 1,
                mark_before=mark,
                mark_after=revision,
                version_before=version,
                version_after=version + 1,
            ),
            reply(round(t + 0.03, 6), w, number, "accepted", version=version),
        ]
        mark, version = revision, version + 1
        events += [
            release(round(t + 0.05, 6), w, revision, True, revision + 1),
            revoked(round(t + 0.051, 6), w, revision, revision + 1),
        ]
        t = round(t + 0.1, 6)
        if late_at is not None and n == late_at and stale is not None:
            old, _ = stale
            request[STALE] += 1
            late = request[STALE]
            events += [
                send(round(t - 0.04, 6), STALE, late, old, old, value=version + 1),
                deliver(
                    round(t - 0.03, 6),
                    STALE,
                    late,
                    old,
                    old,
                    "accepted",
                    value=version + 1,
                    mark_before=mark,
                    mark_after=old,
                    version_before=version,
                    version_after=version + 1,
                ),
            ]
            mark, version = old, version + 1
    events.append(final_read(t + 0.1, version, version, mark, []))
    history = History("long", Settings(receiver="fenced", workers=3), recorded(events, "fenced"))
    return history


def test_the_long_run_as_recorded_is_allowed_and_covered_from_first_event_to_last() -> None:
    report = analyse(long_run(stale_grant=4))
    assert report.witnessed.impossible == (), report.witness_lines()
    conformance = report.conformance
    assert conformance.allowed, conformance.verdict()
    coverage = conformance.coverage
    assert coverage is not None and coverage.segments >= 4
    assert coverage.events == (len(report.line.events), len(report.line.events))
    assert coverage.grants == (GRANTS, GRANTS) and coverage.fraction == 1.0
    assert conformance.properties_agree, conformance.agreement


@pytest.mark.parametrize(
    ("stale_grant", "late_at"),
    [(1, 2), (4, 9), (24, 28)],
    ids=["early", "across a cut", "late"],
)
def test_a_violation_planted_anywhere_in_a_long_run_is_refused_there(
    stale_grant: int, late_at: int
) -> None:
    history = long_run(stale_grant, late_at)
    line = timeline(history)
    planted = next(
        e
        for e in line.events
        if e.kind == "deliver" and e.worker == STALE and e.get("request") == f"W{STALE}-1"
    )
    found = cross_check(line).impossible
    assert [(f.code, f.event) for f in found if f.code == "receiver-rule"] == [
        ("receiver-rule", planted.index)
    ]
    report = analyse(history)
    assert report.refused
    refused = report.conformance.refused
    assert refused is not None and refused.event.index == planted.index, (
        report.conformance.verdict()
    )
    assert "the model's receiver gives 'rejected'" in refused.reason
    coverage = report.conformance.coverage
    assert coverage is not None
    if late_at > 8:  # past the first segment: the model refused it from a rebuilt state
        assert coverage.segments >= 2 and report.conformance.segment is not None
        start, trace = report.conformance.segment
        assert start <= planted.index
        stale_grant_event = next(e for e in line.events if e.kind == "grant" and e.worker == STALE)
        if stale_grant == 4:  # the grant and its token crossed at least one cut
            assert stale_grant_event.index < start
            assert trace.steps and trace.steps[0].before != trace.system.initial()  # rebuilt


def test_a_random_token_reused_across_the_run_is_refused() -> None:
    """Random tokens (lease IDs): the last grant reuses the first grant's ID, many grants and
    segments later; the witnesses check the whole run, not a segment."""
    history = long_run()
    events = []
    last_revision = 2 + 3 * (GRANTS - 1)
    for e in history.events:
        if e["kind"] in ("grant", "lock-put") and e.get("revision") is not None:
            revision = int(e["revision"])
            lease = 900 if revision == last_revision else 1000 + revision
            e = {**e, "lease": lease} | ({"token": lease} if e["kind"] == "grant" else {})
        elif e["kind"] in ("send", "deliver") and e.get("grant") is not None:
            grant_revision = int(e["grant"])
            token = 900 if grant_revision == last_revision else 1000 + grant_revision
            e = {**e, "token": token}
            if e["kind"] == "deliver":
                e.pop("mark_before", None)
                e.pop("mark_after", None)
        events.append(e)
    first = next(e for e in events if e["kind"] == "grant")
    events = [
        {**e, "lease": 900, "token": 900}
        if e is first
        else ({**e, "lease": 900} if e["kind"] == "lock-put" and e["revision"] == 2 else e)
        for e in events
    ]
    settings = Settings(receiver="none", workers=3, token="lease-id")
    found = cross_check(timeline(History("ids", settings, tuple(events)))).impossible
    assert [f.code for f in found if f.code == "token-reused"] == ["token-reused"], found


def test_fencing_replay_tells_the_refused_segment_from_its_rebuilt_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "long.json"
    path.write_text(history_to_json(long_run(4, 9)))
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert (
        "from the state the one before ended in (core (fencing), W=3 L=2 T=0 G=8 K=1); there "
        "W3 holds grant #1 (token 1); the receiver's mark is 2:"
    ) in out
    assert "W3's write carrying token 1 is rejected" in out  # the model's own receiver


def test_a_killed_workers_request_in_flight_crosses_the_cut() -> None:
    """W3's write is held at the store, W3 is killed, and the store decides the write many
    grants (and a cut) later: the model carries the dead worker's request across the cut and
    its receiver rejects it, as the store did."""
    history = long_run(stale_grant=4)
    events = list(history.events)
    stale = next(e for e in events if e["kind"] == "grant" and e["worker"] == STALE)
    t, revision = stale["t"], stale["revision"]
    events += [
        send(round(t + 0.01, 6), STALE, 1, revision, revision, value=99),
        {"t": round(t + 0.011, 6), "source": "storage", "kind": "hold", "worker": STALE}
        | {"request": f"W{STALE}-1", "phase": "deliver", "op": "write"},
        {"t": round(t + 0.05, 6), "source": "lab", "kind": "crash", "worker": STALE}
        | {"pid": 123, "asked": round(t + 0.049, 6)},
    ]
    last = max(e["t"] for e in events if e["kind"] != "final-read")
    decided = {"mark_before": 2 + 3 * (GRANTS - 1), "version_before": GRANTS - 1}
    events += [
        {"t": round(last + 0.01, 6), "source": "storage", "kind": "unhold", "worker": STALE}
        | {"request": f"W{STALE}-1", "phase": "deliver"},
        deliver(round(last + 0.011, 6), STALE, 1, revision, revision, "rejected", value=99)
        | decided
        | {"version_after": GRANTS - 1},
    ]
    final = next(e for e in events if e["kind"] == "final-read")
    events = [e for e in events if e is not final] + [{**final, "t": round(last + 0.1, 6)}]
    report = analyse(History("long", history.settings, tuple(events)))
    assert report.witnessed.impossible == (), report.witness_lines()
    conformance = report.conformance
    assert conformance.allowed, conformance.verdict()
    assert conformance.coverage is not None and conformance.coverage.segments >= 2
    assert conformance.coverage.fraction == 1.0
    assert conformance.design.crashes == 1
