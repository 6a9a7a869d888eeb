"""Every fact a lab history records is checked against an independent source: one hand-made
history per refusal, each beside a control that differs from it only in that fact and is
allowed. The grants and their tokens (the lock service's own record), the store's life and
its receiver's rule, keepalives and lease ends (no slack where none is due), the nemesis
(its schedule drawn again from the seed, each fault accounted for, a killed member seen by
another, a skew seen on the worker's own clock) and the stored prediction (made again)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from lab.history import History, timeline
from lab.nemesis import Fault, schedule
from lab.report import analyse
from lab.scenarios import predict, scenario
from lab.settings import Settings
from lab.witness import cross_check
from tests.lab.histories import (
    deliver,
    final_read,
    grant,
    invoke_acquire,
    paused_worker,
    recorded,
    release,
    reply,
    revoked,
    send,
    storage_start,
    watch_put,
    witnessed,
)

Event = dict[str, Any]


def codes(history: History) -> set[str]:
    """The codes of the contradictions the witnesses find."""
    return {found.code for found in cross_check(timeline(history)).impossible}


def reasons(history: History, code: str) -> list[str]:
    """The sentences of the contradictions of one code."""
    return [f.reason for f in cross_check(timeline(history)).impossible if f.code == code]


def without(history: History, keep: Callable[[Event], bool]) -> History:
    """The history without the events `keep` turns down."""
    return dataclasses.replace(history, events=tuple(e for e in history.events if keep(e)))


def with_events(history: History, *added: Event) -> History:
    """The history with more events."""
    return dataclasses.replace(history, events=(*history.events, *added))


def not_w2s_acquire(e: Event) -> bool:
    """Every event but W2's own acquire."""
    return not (e["kind"] == "invoke" and e.get("op") == "acquire" and e.get("worker") == 2)


# ----- the lock service's grants and their tokens ------------------------------------------------


def w2_writes_with(token: int, grant_revision: int = 4) -> dict[str, Any]:
    """witnessed() changes: W2's grant and its write carry this token (and grant)."""
    fields = {"value": 2_000_001}
    accepted = {"mark_before": 2, "mark_after": token, "version_before": 1, "version_after": 2}
    return {
        "grant2": grant(0.30, 2, 4, token=token, asked=0.29),
        "send2": send(0.32, 2, 1, token, grant_revision, **fields),
        "deliver2": deliver(0.33, 2, 1, token, grant_revision, "accepted", **fields, **accepted),
        "final": final_read(1.60, 2_000_001, 2, token, []),
    }


def one_write(t: float, w: int, token: int, revision: int) -> list[Event]:
    """W's one write under its grant, accepted by a plain store, and the answer it hears."""
    return [
        send(t, w, 1, token, revision),
        deliver(t + 0.01, w, 1, token, revision, "accepted"),
        reply(t + 0.02, w, 1, "accepted"),
    ]


def zookeeper_grants(second_token: int) -> History:
    """Two ZooKeeper grants in turn, one write each: W1's znode has sequence 5, W2's the
    given one."""
    events: list[Event] = [storage_start(0.01, receiver="none", mark=None)]
    for w, revision, token, t in ((1, 10, 5, 0.1), (2, 12, second_token, 0.5)):
        node = {"node": f"x__lock__{token:010d}"}
        events += [
            grant(t, w, revision, token=token, lease=70 + w, asked=t - 0.01, **node),
            {**watch_put(t + 0.001, w, revision), "token": token, "lease": 70 + w, **node},
            *one_write(t + 0.05, w, token, revision),
            release(t + 0.2, w, revision, True, revision) | {"ordered": False},
            revoked(t + 0.201, w, revision, revision),
        ]
    events.append(final_read(1.0, 2_000_001, None, None, []))
    settings = Settings(lock_service="zookeeper", token="sequence")
    return History("zk", settings, recorded(events, "none"))


def lease_id_grants(second_lease: int) -> History:
    """Two grants whose token is the lease ID, one write each: W1's lease 555, W2's the
    given one."""
    events: list[Event] = [storage_start(0.01, receiver="none", mark=None)]
    for w, revision, lease, t in ((1, 2, 555, 0.1), (2, 4, second_lease, 0.5)):
        events += [
            grant(t, w, revision, token=lease, lease=lease, asked=t - 0.01),
            {**watch_put(t + 0.001, w, revision), "lease": lease},
            *one_write(t + 0.05, w, lease, revision),
            release(t + 0.2, w, revision, True, revision + 1),
            revoked(t + 0.201, w, revision, revision + 1),
        ]
    events.append(final_read(1.0, 2_000_001, None, None, []))
    return History("ids", Settings(token="lease-id"), recorded(events, "none"))


def unheard_grant(asking: bool) -> History:
    """After the run's writes, etcd's record shows a grant to W1 (revision 6) that W1 never
    heard of, ended by its lease; W1 is asking for the lock then, or not."""
    extra = [
        watch_put(1.50, 1, 6),
        revoked(2.55, 1, 6, 7),
        *([invoke_acquire(1.49, 1)] if asking else []),
    ]
    return witnessed(extra=extra, final=final_read(2.70, 2_000_001, 2, 4, []))


GRANT_REFUSALS: list[tuple[str, History, str, str]] = [
    (
        "a grant the service's record does not have",
        witnessed(put2=None),
        "grant-unrecorded",
        "W2 says etcd granted it the lock (grant 4, token 4) at 0.300 s, but the lab's record "
        "of etcd has no such grant",
    ),
    (
        "a grant the record gives to another worker",
        witnessed(put2=watch_put(0.301, 1, 4)),
        "grant-holder",
        "W2 says etcd granted it the lock (grant 4) at 0.300 s, but etcd's record names W1 as "
        "that grant's holder",
    ),
    (
        "a create-revision token that is not the key's create revision",
        witnessed(**w2_writes_with(5)),
        "grant-token",
        "W2's grant 4 carries token 5, but etcd's record of that grant gives token 4 "
        "(create-revision)",
    ),
    (
        "a store accepting token 77 under a grant never made",
        witnessed(**{k: v for k, v in w2_writes_with(77, 9).items() if k != "grant2"}),
        "step-unheld",
        "W2 sent request W2-1 under grant 9 at 0.320 s, but it never received that grant",
    ),
    (
        "a grant to a worker that had not asked for the lock",
        without(witnessed(), not_w2s_acquire),
        "grant-unasked",
        "W2 recorded grant 4 at 0.300 s without an acquire of its own open then",
    ),
    (
        "a grant only the record shows, to a worker not asking",
        unheard_grant(asking=False),
        "grant-unasked",
        "etcd's record shows a grant to W1 (grant 6) at 1.500 s, but W1 was not asking for the "
        "lock then",
    ),
    (
        "a ZooKeeper sequence that goes back",
        zookeeper_grants(3),
        "token-order",
        "W2's grant 12 at 0.500 s carries token 3, not higher than token 5 of W1's earlier "
        "grant 10: ZooKeeper's sequence never goes back",
    ),
    (
        "a lease ID handed out twice",
        lease_id_grants(555),
        "token-reused",
        "W2's grant 4 at 0.500 s carries token 555, already handed out with W1's grant 2: "
        "etcd never hands out a lease-id twice",
    ),
    (
        "a request sent with another token than its grant's",
        witnessed(send2=send(0.32, 2, 1, 3, 4, value=2_000_001)),
        "step-unheld",
        "W2 sent request W2-1 with token 3 under grant 4 at 0.320 s, but that grant carries "
        "token 4",
    ),
    (
        "a decision on a request nobody sent",
        witnessed(
            extra=[deliver(0.35, 1, 9, 2, 2, "rejected", mark_before=4, version_before=2)],
        ),
        "decision-unsent",
        "the store decided request W1-9 at 0.350 s, but no worker had sent it",
    ),
    (
        "a decision on a token the worker did not send",
        witnessed(send2=send(0.32, 2, 1, 4, 4, value=2_000_002)),
        "decision-unsent",
        "the store decided request W2-1 at 0.330 s with value 2000001, but W2 sent it with "
        "value 2000002",
    ),
]
GRANT_CONTROLS: list[tuple[str, History]] = [
    ("the consistent run", witnessed()),
    ("a ZooKeeper sequence that rises", zookeeper_grants(7)),
    ("two lease IDs", lease_id_grants(777)),
    ("a grant only the record shows, to a worker asking", unheard_grant(asking=True)),
]


@pytest.mark.parametrize(
    ("history", "code", "sentence"),
    [case[1:] for case in GRANT_REFUSALS],
    ids=[case[0] for case in GRANT_REFUSALS],
)
def test_a_grant_or_token_the_service_never_gave_is_refused(
    history: History, code: str, sentence: str
) -> None:
    assert sentence in reasons(history, code), cross_check(timeline(history)).impossible
    assert analyse(history).refused


@pytest.mark.parametrize(
    "history", [case[1] for case in GRANT_CONTROLS], ids=[case[0] for case in GRANT_CONTROLS]
)
def test_grants_and_tokens_as_the_service_gave_them_are_allowed(history: History) -> None:
    report = analyse(history)
    assert report.witnessed.impossible == (), report.witness_lines()
    assert report.conformance.allowed, report.conformance.verdict()


def test_a_grant_its_worker_never_heard_of_is_a_grant_the_model_makes_too() -> None:
    """The model's lock is W1's until that grant's lease ends; W1 holds nothing after it."""
    report = analyse(unheard_grant(asking=True))
    acquires = [
        step.action.label()
        for step in report.conformance.trace.steps  # type: ignore[union-attr]
        if step.action.name == "Acquire"
    ]
    assert acquires == ["Acquire(W1)", "Acquire(W2)", "Acquire(W1)"]


# ----- the store's life and its receiver's rule ---------------------------------------------------


def kill(t: float, incarnation: int, pid: int) -> Event:
    """The nemesis killed the storage process (recorded once it was gone)."""
    return {
        "t": t,
        "source": "lab",
        "kind": "storage-kill",
        "incarnation": incarnation,
        "pid": pid,
        "asked": round(t - 0.002, 6),
    }


def restarted(started: float, pid: int = 4002, incarnation: int = 2) -> History:
    """The store is killed at 0.31 s, between W2's send and its decision at 0.33 s, and
    started again (keeping its durable mark 2) at `started`."""
    again = storage_start(started, incarnation=incarnation, mark=2) | {"pid": pid}
    return witnessed(extra=[kill(0.31, 1, 4001), again])


def plain_rejects(outcome: str) -> History:
    """A plain store decides the paused worker's late write: accepted, or rejected."""
    base = paused_worker("none", "accepted")
    late = next(e for e in base.events if e["kind"] == "deliver" and e["worker"] == 1)
    changed = {**late, "outcome": outcome}
    return dataclasses.replace(base, events=tuple(changed if e is late else e for e in base.events))


def fenced_accepts(outcome: str) -> History:
    """A fenced store decides the paused worker's late write (token 2, mark 4)."""
    base = paused_worker("fenced", "rejected")
    late = next(e for e in base.events if e["kind"] == "deliver" and e["worker"] == 1)
    after = {"mark_after": 2} if outcome == "accepted" else {}
    changed = {**late, "outcome": outcome, **after}
    return dataclasses.replace(base, events=tuple(changed if e is late else e for e in base.events))


STORE_REFUSALS: list[tuple[str, History, str, str]] = [
    (
        "a decision while no storage process ran",
        restarted(0.35),
        "store-down",
        "the store recorded 'deliver' of request W2-1 at 0.330 s while no storage process ran "
        "(incarnation 1 was killed at 0.310 s)",
    ),
    (
        "a store that came back as the very process killed",
        restarted(0.32, pid=4001),
        "store-pid",
        "incarnation 2 of the storage process started at 0.320 s as process 4001, the very "
        "process the kill of incarnation 1 left dead",
    ),
    (
        "an incarnation out of turn",
        restarted(0.32, incarnation=3),
        "store-life",
        "the storage process started as incarnation 3 at 0.320 s, but the next incarnation is "
        "number 2",
    ),
    (
        "a plain store that rejects a write",
        plain_rejects("rejected"),
        "receiver-rule",
        "the store rejected W1's write W1-1 at 1.580 s, but a plain store accepts every write",
    ),
    (
        "a fenced store that accepts a token below its mark",
        fenced_accepts("accepted"),
        "receiver-rule",
        "the store let W1's write W1-1 with token 2 at 1.580 s with its mark at 4: a fenced "
        "store accepts a token exactly when it is at least the mark",
    ),
]
STORE_CONTROLS: list[tuple[str, History]] = [
    ("a store started again before the decision", restarted(0.32)),
    ("a plain store that accepts the late write", plain_rejects("accepted")),
    ("a fenced store that rejects it", fenced_accepts("rejected")),
]


@pytest.mark.parametrize(
    ("history", "code", "sentence"),
    [case[1:] for case in STORE_REFUSALS],
    ids=[case[0] for case in STORE_REFUSALS],
)
def test_a_decision_outside_the_stores_life_or_its_rule_is_refused(
    history: History, code: str, sentence: str
) -> None:
    assert sentence in reasons(history, code), cross_check(timeline(history)).impossible
    assert analyse(history).refused


@pytest.mark.parametrize(
    "history", [case[1] for case in STORE_CONTROLS], ids=[case[0] for case in STORE_CONTROLS]
)
def test_decisions_inside_the_stores_life_and_by_its_rule_are_allowed(history: History) -> None:
    report = analyse(history)
    assert report.witnessed.impossible == (), report.witness_lines()
    assert report.conformance.allowed, report.conformance.verdict()


# ----- keepalives and the ends of leases: no slack where none is due --------------------------


def renew(asked: float, w: int, revision: int) -> Event:
    """The service took W's keepalive for a grant, asked for at `asked` (heard 10 ms later)."""
    return {
        "t": round(asked + 0.01, 6),
        "source": f"W{w}",
        "kind": "renew",
        "worker": w,
        "grant": revision,
        "lease": 1000 + revision,
        "ttl": 1,
        "asked": asked,
    }


MEASURED = {"request_seconds": 0.02, "revocation_seconds": 0.45}
"""What a run on a quiet machine measures: a 20 ms request, a probe lease revoked 450 ms late."""


def measured(history: History) -> History:
    """The history with the run's own measurements."""
    return dataclasses.replace(history, measured=MEASURED)


def w2_lease_ends(at: float, *extra: Event) -> History:
    """W2's lease (granted at 0.30 s, never renewed unless `extra` says so) revoked at `at`,
    with measurements."""
    return measured(
        witnessed(
            revoke2=revoked(at, 2, 4, 5),
            final=final_read(at + 0.1, 2_000_001, 2, 4, []),
            extra=list(extra),
        )
    )


def keepalive_asked(at: float, *answer: str) -> list[Event]:
    """W2 asks for a keepalive of grant 4 at `at`; `answer` is what it heard 10 ms later
    (`fail`: the lease had expired; `info`: no answer; nothing: it never heard back)."""
    ids = {"worker": 2, "grant": 4, "lease": 1004}
    events: list[Event] = [{"t": at, "source": "W2", "kind": "invoke", "op": "renew", **ids}]
    for kind in answer:
        events.append(
            {
                "t": round(at + 0.01, 6),
                "source": "W2",
                "kind": kind,
                "op": "renew",
                **ids,
                "error": "the lease had already expired",
            }
        )
    return events


def zookeeper_session_ends(at: float) -> History:
    """W2 holds a ZooKeeper lock from 0.50 s, is stopped (SIGSTOP) at 0.60 s and never
    resumed before its session ends at `at`; the observer's looks take at most 30 ms."""
    events: list[Event] = [storage_start(0.01, receiver="none", mark=None)]
    node = {"node": "x__lock__0000000007"}
    events += [
        grant(0.5, 2, 12, token=7, lease=72, asked=0.49, **node),
        {**watch_put(0.501, 2, 12), "token": 7, "lease": 72, **node},
        {"t": 0.6, "source": "lab", "kind": "pause", "worker": 2, "stopped_at": 0.6},
        revoked(at, 2, 12, 12),
        {"t": at + 0.5, "source": "lab", "kind": "resume", "worker": 2},
        final_read(at + 0.6, 0, 0, None, []),
    ]
    settings = Settings(lock_service="zookeeper", token="sequence")
    history = History("zk", settings, recorded(events, "none"))
    return dataclasses.replace(history, measured={"observer_seconds": 0.03})


LEASE_REFUSALS: list[tuple[str, History, str, str]] = [
    (
        "a keepalive asked for 0.22 s after the watch saw its lease revoked",
        witnessed(extra=[renew(1.67, 2, 4)]),
        "renew-after-end",
        "etcd took W2's keepalive for grant 4, asked for at 1.670 s, but etcd revoked its "
        "lease at 1.450 s: a lease that has ended cannot be kept alive",
    ),
    (
        "a keepalive asked for after its holder released",
        witnessed(extra=[renew(0.25, 1, 2)]),
        "renew-after-end",
        "etcd took W1's keepalive for grant 2, asked for at 0.250 s, but W1 had released it "
        "at 0.200 s: a lease that has ended cannot be kept alive",
    ),
    (
        "a lease that lived 1.7 s of a 1 s TTL",
        w2_lease_ends(2.0),
        "lease-late",
        "etcd ended W2's lease (grant 4) at 2.000 s, 1.700 s after the grant: later than its "
        "TTL of 1 s plus the 0.520 s allowed (etcd's lessor looks for expired leases every "
        "500 ms, plus the run's latency of 0.020 s)",
    ),
    (
        "a ZooKeeper session that outlived its stopped client",
        zookeeper_session_ends(2.0),
        "lease-late",
        "ZooKeeper ended W2's lease (grant 12) at 2.000 s, 1.400 s after W2 stopped running: "
        "later than its TTL of 1 s plus the 0.130 s allowed (ZooKeeper expires sessions at its "
        "next tick (the lab's tick: 100 ms), plus the run's latency of 0.030 s)",
    ),
    (
        "a lease that lived 1.7 s after a keepalive the service refused as too late",
        w2_lease_ends(2.0, *keepalive_asked(0.9, "fail")),
        "lease-late",
        "etcd ended W2's lease (grant 4) at 2.000 s, 1.700 s after the grant: later than its "
        "TTL of 1 s plus the 0.520 s allowed (etcd's lessor looks for expired leases every "
        "500 ms, plus the run's latency of 0.020 s)",
    ),
]
LEASE_CONTROLS: list[tuple[str, History]] = [
    ("a keepalive asked for before the lease ended", witnessed(extra=[renew(0.40, 2, 4)])),
    ("a keepalive asked for before the release", witnessed(extra=[renew(0.15, 1, 2)])),
    ("a lease revoked 1.45 s after its grant", w2_lease_ends(1.75)),
    (
        "a lease revoked 1.1 s after a keepalive whose sender never heard back",
        w2_lease_ends(2.0, *keepalive_asked(0.9)),
    ),
    (
        "a lease revoked 1.1 s after a keepalive whose answer was lost",
        w2_lease_ends(2.0, *keepalive_asked(0.9, "info")),
    ),
    ("a ZooKeeper session that ends a TTL after its client stopped", zookeeper_session_ends(1.65)),
]


@pytest.mark.parametrize(
    ("history", "code", "sentence"),
    [case[1:] for case in LEASE_REFUSALS],
    ids=[case[0] for case in LEASE_REFUSALS],
)
def test_a_keepalive_after_its_lease_or_a_lease_past_its_allowance_is_refused(
    history: History, code: str, sentence: str
) -> None:
    assert sentence in reasons(history, code), cross_check(timeline(history)).impossible
    assert analyse(history).refused


@pytest.mark.parametrize(
    "history", [case[1] for case in LEASE_CONTROLS], ids=[case[0] for case in LEASE_CONTROLS]
)
def test_keepalives_and_lease_ends_within_their_allowances_are_allowed(history: History) -> None:
    assert cross_check(timeline(history)).impossible == ()


def test_the_report_prints_the_allowances_it_measured() -> None:
    text = analyse(w2_lease_ends(1.75)).text()
    assert (
        "Allowed for: 0.020 s of observation latency (the slowest of the run's status "
        "requests to etcd, 0.020 s); a lease may be seen to end up to 0.520 s past its TTL "
        "(etcd's lessor looks for expired leases every 500 ms, plus that latency); a "
        "keepalive or a step after a lease's end: none"
    ) in text
    unmeasured = analyse(witnessed()).text()
    assert "Allowed for: 0.500 s of observation latency (the history measured none)" in unmeasured
    assert analyse(w2_lease_ends(1.75)).to_dict()["allowances"] == {
        "latency_seconds": 0.02,
        "latency_from": "the slowest of the run's status requests to etcd, 0.020 s",
        "lease_end_seconds": 0.52,
        "end_delay_from": "etcd's lessor looks for expired leases every 500 ms",
    }


# ----- the nemesis: its schedule drawn again, each fault accounted for ----------------------------

NEMESIS_SETTINGS = Settings(
    workers=2, seconds=2, pause_rate=0.5, seed=2, faults="pause,hold,store-kill,crash,skew"
)
"""A short randomized run whose seed draws: W2's clock at 1.5x; a store kill at 0.764 s; a
hold of W2 at 0.832 s for 2.261 s; a pause of the holder at 1.253 s for 1.074 s; a kill of
W2 at 1.378 s (which never comes: W1 is paused then, and one worker is always spared)."""
START = 1.0
"""When the nemesis started (the schedule's times count from it): it ends at 3.0 s."""


def lab(t: float, kind: str, **fields: Any) -> Event:
    """An event the lab (its nemesis) records."""
    return {"t": t, "source": "lab", "kind": kind, **fields}


def nemesis_events(**changes: Event | None) -> list[Event]:
    """The run's events as the lab records them, by name; `changes` replaces (or drops) some."""
    events: dict[str, Event | None] = {
        "start1": storage_start(0.30, receiver="none", mark=None),
        "skew": lab(0.35, "skew", worker=2, rate=1.5, fault=1),
        "nemesis": lab(START, "nemesis-start"),
        "ask1": invoke_acquire(1.001, 1) | {"wall": 0.0},
        "ask2": invoke_acquire(1.001, 2) | {"wall": 0.0},
        "kill": kill(1.77, 1, 4001) | {"fault": 2},
        "start2": storage_start(1.80, incarnation=2, receiver="none", mark=None),
        "hold": lab(1.833, "hold-set", worker=2, phase="deliver", fault=3),
        "pause": lab(2.254, "pause", worker=1, stopped_at=2.2545, fault=4),
        "resume": lab(3.01, "resume", worker=1, fault=4),
        "crash": lab(3.01, "fault-skipped", fault=5, why="run-over"),
        "lift": lab(3.02, "hold-lift", worker=2, fault=3),
        "clock2": {"t": 3.04, "source": "W2", "kind": "clock", "worker": 2}
        | {"wall_seconds": 3.06, "real_seconds": 2.04},
        "clock1": {"t": 3.05, "source": "W1", "kind": "clock", "worker": 1}
        | {"wall_seconds": 2.05, "real_seconds": 2.05},
        "final": final_read(3.2, 0, 0, None, []) | {"data": {"value": 0, "version": 0}},
    }
    extra = changes.pop("extra", None)
    for name, event in changes.items():
        assert name in events, name
        events[name] = event
    found = [event for event in events.values() if event is not None]
    return found + (list(extra) if isinstance(extra, list) else [])


def nemesis_run(partial: str = "", given: tuple[Fault, ...] = (), **changes: Any) -> History:
    """The run's history (`partial`: stopped early; `given`: a schedule given by the caller)."""
    faults = given or schedule(NEMESIS_SETTINGS)
    return History(
        "random",
        NEMESIS_SETTINGS,
        tuple(nemesis_events(**changes)),
        partial=partial,
        nemesis=faults,
        nemesis_given=bool(given),
    )


def moved_schedule() -> tuple[Fault, ...]:
    """The seed's schedule with the hold on W1 instead of W2."""
    drawn = list(schedule(NEMESIS_SETTINGS))
    drawn[2] = dataclasses.replace(drawn[2], target=1)
    return tuple(drawn)


def member_run(**changes: Event | None) -> History:
    """A run on three etcd members whose seed draws one kill of member 3 (at 1.034 s, for
    1.412 s): killed, seen gone by member 1, started again as another process."""
    settings = Settings(workers=2, seconds=2, seed=4, faults="member-kill", members=3)
    (fault,) = schedule(settings)
    at, back = START + fault.at, START + fault.at + fault.seconds
    events: dict[str, Event | None] = {
        "start1": storage_start(0.30, receiver="none", mark=None),
        "nemesis": lab(START, "nemesis-start"),
        "kill": lab(at, "member-kill", member=fault.target, pid=5000, fault=1),
        "seen": lab(at + 0.01, "member-seen", member=fault.target, by=1, fault=1),
        "back": lab(back, "member-start", member=fault.target, pid=5001, fault=1),
        "clock1": {"t": 3.05, "source": "W1", "kind": "clock", "worker": 1}
        | {"wall_seconds": 2.05, "real_seconds": 2.05},
        "clock2": {"t": 3.05, "source": "W2", "kind": "clock", "worker": 2}
        | {"wall_seconds": 2.05, "real_seconds": 2.05},
    }
    for name, event in changes.items():
        events[name] = event
    kept = tuple(e for e in events.values() if e is not None)
    return History("random", settings, kept, nemesis=schedule(settings))


NEMESIS_REFUSALS: list[tuple[str, History, str, str]] = [
    (
        "a recorded schedule that is not the seed's",
        dataclasses.replace(nemesis_run(), nemesis=moved_schedule()),
        "nemesis-schedule",
        "fault 3 of the recorded schedule is a hold of W1 for 2.261 s at 0.832 s, but seed 2 "
        "draws a hold of W2 for 2.261 s at 0.832 s for these settings",
    ),
    (
        "a member kill the schedule never had",
        nemesis_run(extra=[lab(2.5, "member-kill", member=2, pid=99)]),
        "nemesis-extra",
        "the history records a member-kill at 2.500 s that is no fault of the run's schedule",
    ),
    (
        "a fault of the schedule that is missing",
        nemesis_run(pause=None, resume=None),
        "fault-missing",
        "fault 4 (a pause of the holder for 1.074 s at 1.253 s) neither took effect nor was "
        "skipped",
    ),
    (
        "a fault that took effect twice",
        nemesis_run(extra=[lab(2.6, "fault-skipped", fault=4, why="not-running")]),
        "fault-twice",
        "fault 4 (a pause of the holder for 1.074 s at 1.253 s) took effect more than once",
    ),
    (
        "a fault before its time",
        nemesis_run(pause=lab(2.0, "pause", worker=1, stopped_at=2.0, fault=4)),
        "fault-early",
        "fault 4 (a pause of the holder for 1.074 s at 1.253 s) took effect at 2.000 s, before "
        "its time (2.253 s)",
    ),
    (
        "a fault on another target than it names",
        nemesis_run(hold=lab(1.833, "hold-set", worker=1, phase="deliver", fault=3)),
        "fault-target",
        "fault 3 (a hold of W2 for 2.261 s at 0.832 s) took effect on W1",
    ),
    (
        "a pause cut short",
        nemesis_run(resume=lab(2.5, "resume", worker=1, fault=4)),
        "fault-short",
        "W1 was resumed at 2.500 s, 0.246 s after its pause at 2.254 s: the fault lasts 1.074 s",
    ),
    (
        "a fault skipped for a reason the history contradicts",
        nemesis_run(crash=lab(2.5, "fault-skipped", fault=5, why="run-over")),
        "fault-skip",
        "a crash of W2 at 1.378 s was skipped at 2.500 s because the run ended while it waited "
        "to be tried again, but the history says otherwise",
    ),
    (
        "a SIGSTOP never seen delivered",
        nemesis_run(pause=lab(2.254, "pause", worker=1, fault=4)),
        "pause-unseen",
        "the nemesis paused W1 at 2.254 s, but W1 was never seen stopped (no SIGSTOP took hold)",
    ),
    (
        "a SIGSTOP with no SIGCONT",
        nemesis_run(resume=None),
        "pause-unended",
        "W1 was stopped (SIGSTOP) at 2.254 s and never resumed (SIGCONT) nor killed",
    ),
    (
        "a request held with no hold set on its worker",
        nemesis_run(
            extra=[
                {"t": 2.0, "source": "storage", "kind": "hold", "worker": 1}
                | {"request": "W1-1", "phase": "deliver", "op": "write"}
            ]
        ),
        "hold-unasked",
        "the store held W1's request W1-1 at 2.000 s, but the nemesis had set no hold on W1 then",
    ),
    (
        "a skewed worker whose own clock ran at real speed",
        nemesis_run(
            clock2={"t": 3.04, "source": "W2", "kind": "clock", "worker": 2}
            | {"wall_seconds": 2.04, "real_seconds": 2.04}
        ),
        "clock-skew",
        "W2's own clock reports ran at 1.00x real time over 2.040 s, but the nemesis says it "
        "ran at 1.5x",
    ),
    (
        "an unskewed worker whose clock ran fast",
        nemesis_run(
            clock1={"t": 3.05, "source": "W1", "kind": "clock", "worker": 1}
            | {"wall_seconds": 3.075, "real_seconds": 2.05}
        ),
        "clock-skew",
        "W1's own clock reports ran at 1.50x real time over 2.050 s, but the nemesis says it "
        "ran at 1x",
    ),
    (
        "the machine's clock set forward by a second in the middle of the run",
        nemesis_run(
            clock2={"t": 3.04, "source": "W2", "kind": "clock", "worker": 2}
            | {"wall_seconds": 3.06 + 1.5, "real_seconds": 2.04},
            clock1={"t": 3.05, "source": "W1", "kind": "clock", "worker": 1}
            | {"wall_seconds": 2.05 + 1.0, "real_seconds": 2.05},
        ),
        "clock-step",
        "every worker's own clock jumped by about +1.000 s against real time, skewed or not "
        "(W1 +1.000 s, W2 +1.000 s): the machine's wall clock was set during the run, so the "
        "workers' clock reports cannot confirm the nemesis's skews",
    ),
    (
        "both clocks fast, but by different jumps: each worker's own skew",
        nemesis_run(
            clock2={"t": 3.04, "source": "W2", "kind": "clock", "worker": 2}
            | {"wall_seconds": 3.06 + 1.5 * 1.3, "real_seconds": 2.04},
            clock1={"t": 3.05, "source": "W1", "kind": "clock", "worker": 1}
            | {"wall_seconds": 2.05 + 1.0, "real_seconds": 2.05},
        ),
        "clock-skew",
        "W1's own clock reports ran at 1.49x real time over 2.050 s, but the nemesis says it "
        "ran at 1x",
    ),
    (
        "a worker that ran to the end and never reported its clock",
        nemesis_run(clock1=None),
        "clock-unreported",
        "W1 ran to the end of the run but never reported its own clock",
    ),
    (
        "a killed member no other member saw gone",
        member_run(seen=None),
        "member-unseen",
        "the nemesis killed etcd member 3 at 2.034 s, but no other member saw it gone",
    ),
]
NEMESIS_CONTROLS: list[tuple[str, History]] = [
    ("the run as recorded", nemesis_run()),
    (
        "the moved schedule, given by the caller",
        nemesis_run(
            given=moved_schedule(),
            hold=lab(1.833, "hold-set", worker=1, phase="deliver", fault=3),
            lift=lab(3.02, "hold-lift", worker=1, fault=3),
        ),
    ),
    ("a run stopped before the pause", nemesis_run(partial="interrupted", pause=None, resume=None)),
    (
        "the store holding W2's request",
        nemesis_run(
            extra=[
                {"t": 2.0, "source": "storage", "kind": "hold", "worker": 2}
                | {"request": "W2-1", "phase": "deliver", "op": "write"},
                {"t": 3.02, "source": "storage", "kind": "unhold", "worker": 2}
                | {"request": "W2-1", "phase": "deliver"},
            ]
        ),
    ),
    ("the member run as recorded", member_run()),
]


@pytest.mark.parametrize(
    ("history", "code", "sentence"),
    [case[1:] for case in NEMESIS_REFUSALS],
    ids=[case[0] for case in NEMESIS_REFUSALS],
)
def test_a_fault_the_seed_never_drew_or_that_did_not_happen_as_recorded_is_refused(
    history: History, code: str, sentence: str
) -> None:
    assert sentence in reasons(history, code), cross_check(timeline(history)).impossible
    assert analyse(history).refused


@pytest.mark.parametrize(
    "history", [case[1] for case in NEMESIS_CONTROLS], ids=[case[0] for case in NEMESIS_CONTROLS]
)
def test_a_nemesis_that_did_what_its_seed_drew_is_allowed(history: History) -> None:
    assert cross_check(timeline(history)).impossible == ()


def test_a_step_of_the_machines_clock_is_one_refusal_that_blames_no_worker() -> None:
    """When every clock jumped alike, no worker's skew is called wrong: one refusal says the
    machine's clock was set."""
    (stepped,) = [case[1] for case in NEMESIS_REFUSALS if case[2] == "clock-step"]
    codes = [found.code for found in cross_check(timeline(stepped)).impossible]
    assert codes == ["clock-step"]


def test_a_member_started_again_as_the_process_killed_is_refused() -> None:
    again = member_run(back=None)
    kill_event = next(e for e in again.events if e["kind"] == "member-kill")
    same = lab(kill_event["t"] + 1.5, "member-start", member=3, pid=5000, fault=1)
    history = dataclasses.replace(again, events=(*again.events, same))
    assert reasons(history, "member-pid") == [
        f"etcd member 3 was started again at {same['t']:.3f} s as process 5000, the very "
        f"process killed at {kill_event['t']:.3f} s"
    ]


def test_the_report_says_what_became_of_each_fault_and_each_clock() -> None:
    text = analyse(nemesis_run()).text()
    assert (
        "Nemesis (seed 2, pause,hold,store-kill,crash,skew): scheduled 1 pause, 1 hold, "
        "1 store-kill, 1 crash, 1 skew; took effect: 1 pause, 1 hold, 1 store-kill, 1 skew; "
        "skipped: 1 because the run ended while it waited to be tried again"
    ) in text
    assert "Clock: W2's own clock ran at 1.50x real time over 2.040 s (skewed to 1.5x)" in text
    assert "Clock: W1's own clock ran at 1.00x real time over 2.050 s" in text


# ----- the stored prediction, made again --------------------------------------------------------


def predicted(**changes: Any) -> History:
    """The paused worker's history (a plain store: the late write accepted) with the model's
    own prediction stored, some of its facts changed."""
    base = paused_worker("none", "accepted")
    made = predict(scenario("paused-worker"), base.settings).to_dict()
    return dataclasses.replace(base, prediction={**made, **changes})


def test_a_stored_prediction_that_is_the_models_is_shown_as_the_models() -> None:
    report = analyse(predicted())
    assert report.witnessed.impossible == () and report.prediction_agrees is True
    summary = predict(scenario("paused-worker"), report.history.settings).summary()
    assert f"The model predicts: {summary} (reality agreed)." in report.text()


@pytest.mark.parametrize(
    ("changes", "history_scenario", "sentence"),
    [
        (
            {"accepted": 1, "summary": "the model accepts 1 write and rejects 1"},
            "paused-worker",
            "the history's stored prediction differs from the model's in its 'accepted': the "
            "model predicts the model accepts 2 writes and rejects 0; its run violates P1, P2, "
            "P3 for the paused-worker scenario with receiver none, token create-revision",
        ),
        (
            {},
            "a-scenario-of-my-own",
            "the history stores a prediction for scenario 'a-scenario-of-my-own', which the lab "
            "does not have, so the model cannot have made it",
        ),
    ],
    ids=["a count that is not the model's", "a scenario the lab does not have"],
)
def test_a_stored_prediction_that_is_not_the_models_is_refused(
    changes: dict[str, Any], history_scenario: str, sentence: str
) -> None:
    history = dataclasses.replace(predicted(**changes), scenario=history_scenario)
    report = analyse(history)
    assert [(f.code, f.reason) for f in report.witnessed.impossible] == [("prediction", sentence)]
    assert report.refused
    if history_scenario == "paused-worker":  # the report shows the model's own, not the file's
        assert "The model predicts: the model accepts 2 writes and rejects 0" in report.text()


# ----- the service that ran, in every sentence --------------------------------------------------


def test_a_zookeeper_run_is_told_in_zookeepers_words() -> None:
    """Grants, their ends and violations are ZooKeeper's, never etcd's."""
    history = dataclasses.replace(
        zookeeper_session_ends(1.65),
        events=(*zookeeper_session_ends(1.65).events, watch_put(2.5, 1, 20) | {"token": 9}),
    )
    report = analyse(history)
    narrated = "\n".join(report.narrated())
    assert "ZooKeeper grants the lock to W2: znode x__lock__0000000007 (czxid 12)" in narrated
    assert "W2's ZooKeeper session expires and its lock znode is deleted" in narrated
    assert "seen only by the lab's observer: W1 never got the answer" in narrated
    assert "etcd" not in narrated
    assert "etcd grants" not in report.text()


@pytest.mark.parametrize("service", ["zookeeper", "redis"])
def test_a_scenario_whose_lesson_needs_a_token_the_service_lacks_is_refused(service: str) -> None:
    from lab.settings import LabInputError

    with pytest.raises(LabInputError) as refused:
        scenario("version-token").settings(lock_service=service)
    assert str(refused.value) == (
        "the version-token scenario's lesson is the lock key's version (1 again each time the "
        "key is created) as the token (--token version), which "
        f"{'ZooKeeper' if service == 'zookeeper' else 'Redis'} does not give: run it with "
        "--lock-service etcd or etcd-lock-api, or choose another --token"
    )
    assert scenario("paused-worker").settings(lock_service=service).token != "version"


def test_the_guide_lists_every_refusal_in_the_labs_own_words() -> None:
    """docs/lab.md's table of refusals is the lab's table, row for row."""
    import re
    from pathlib import Path

    from lab.contradiction import REFUSALS

    guide = (Path(__file__).resolve().parents[2] / "docs" / "lab.md").read_text()
    witnesses = guide.split("## The witnesses")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| (.+) \|$", witnesses, flags=re.MULTILINE)
    assert rows == list(REFUSALS.items())
    with pytest.raises(ValueError, match="unknown contradiction 'made-up'"):
        from lab.contradiction import Impossible

        Impossible("made-up", None, 0.0, "")


def cluster_lease(*extra: Event) -> History:
    """W2's lease (granted at 0.30 s) revoked at 2.55 s by a three-member cluster, with the
    run's measurements and the given events about the cluster."""
    history = measured(
        witnessed(
            revoke2=revoked(2.55, 2, 4, 5),
            final=final_read(2.7, 2_000_001, 2, 4, []),
            extra=[lab(0.05, "leader", term=2), *extra],
        )
    )
    return dataclasses.replace(history, settings=dataclasses.replace(history.settings, members=3))


@pytest.mark.parametrize(
    ("what", "extra", "allowed"),
    [
        ("the same leader throughout", (), False),
        ("a new leader seen at 1.20 s", (lab(1.2, "leader", term=3),), True),
        (
            "no quorum from 1.10 s to 1.50 s",
            (
                lab(1.0, "member-kill", member=2, pid=501),
                lab(1.01, "member-seen", member=2, by=1),
                lab(1.1, "member-pause", member=3),
                lab(1.5, "member-resume", member=3),
                lab(2.0, "member-start", member=2, pid=502),
            ),
            True,
        ),
        (
            "one member down: the cluster keeps its quorum",
            (
                lab(1.0, "member-kill", member=2, pid=501),
                lab(1.01, "member-seen", member=2, by=1),
                lab(2.0, "member-start", member=2, pid=502),
            ),
            False,
        ),
    ],
)
def test_a_clusters_lease_may_outlive_its_ttl_only_by_a_new_leader_or_a_lost_quorum(
    what: str, extra: tuple[Event, ...], allowed: bool
) -> None:
    """etcd revokes no lease without a quorum, and a newly elected leader renews every
    lease by its TTL: a lease that lived 2.25 s of a 1 s TTL is allowed only then."""
    found = reasons(cluster_lease(*extra), "lease-late")
    assert (found == []) == allowed, (what, found)
    if allowed:
        return
    assert found == [
        "etcd ended W2's lease (grant 4) at 2.550 s, 2.250 s after the grant: later than its "
        "TTL of 1 s plus the 0.520 s allowed (etcd's lessor looks for expired leases every "
        "500 ms, plus the run's latency of 0.020 s)"
    ]


def test_lab_run_refuses_the_scenario_in_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.cli_helpers import run

    code, out, err = run(["lab", "run", "version-token", "--lock-service", "zookeeper"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("fencing: error: the version-token scenario's lesson is the lock key's")


def test_a_scripted_run_has_only_the_faults_its_script_has() -> None:
    """The paused worker's script pauses and resumes; a store kill is no step of it."""
    from lab.scenarios import script_checks

    paused = History(
        "paused-worker",
        Settings(receiver="none"),
        (
            lab(0.5, "pause", worker=1),
            lab(2.5, "resume", worker=1),
        ),
    )
    assert script_checks(paused) == []
    killed = dataclasses.replace(paused, events=(*paused.events, lab(1.5, "storage-kill", pid=77)))
    (refusal,) = script_checks(killed)
    assert refusal.code == "nemesis-extra"
    assert refusal.reason == (
        "the history records a storage-kill at 1.500 s, which the paused-worker scenario's "
        "script never has"
    )


def test_a_property_nothing_put_to_the_test_is_never_said_to_hold() -> None:
    """Blind writes and no crash: P5 and P6 hold only vacuously, in the text and the JSON."""
    from tests.lab.histories import paused_worker

    report = analyse(paused_worker("fenced", "rejected"))
    assert report.properties["P1"].exercised > 0 and not report.properties["P1"].vacuous
    assert report.properties["P5"].vacuous and report.properties["P6"].vacuous
    text = report.text()
    assert "P5 no lost update" in text and "holds vacuously (never put to the test)" in text
    said = report.to_dict()["properties"]
    assert said["P5"]["exercised"] == 0 and said["P1"]["exercised"] > 0
