"""Traces: replay, narration, JSON round trips and refusal of tampered files."""

from __future__ import annotations

import json

import pytest

from fencing.stories import PAUSED_WORKER_ACTIONS, paused_worker_story
from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import TraceError, replay, trace_from_json, trace_to_dict, trace_to_json
from model.rules import Action


def test_paused_worker_story_fails_without_fencing_and_holds_with_it() -> None:
    """The paused worker's late write is accepted by a plain store and refused by a fenced one."""
    plain, fenced = paused_worker_story("none").trace(), paused_worker_story("fenced").trace()
    assert plain.violated() == ("P1", "P2", "P3")
    assert fenced.violated() == ()
    late = PAUSED_WORKER_ACTIONS.index(Action("Deliver", 1))
    assert "accepted" in plain.steps[late].sentence
    assert "rejected" in fenced.steps[late].sentence
    assert "token 1 ≥ highest token seen 2 is false" in fenced.steps[late].sentence


def test_steps_report_the_receivers_outcome() -> None:
    """Each delivery says accepted or rejected; a split receiver says checked, then accepted."""
    plain, fenced = paused_worker_story("none").trace(), paused_worker_story("fenced").trace()
    assert [s.outcome for s in plain.steps if s.outcome] == ["accepted", "accepted"]
    assert [s.outcome for s in fenced.steps if s.outcome] == ["accepted", "rejected"]
    assert all(s.outcome is None for s in plain.steps if s.action.name != "Deliver")
    split = [Action("Acquire", 1), Action("Send", 1), Action("Check", 1), Action("Apply", 1)]
    steps = replay(Design(receiver="fenced-nonatomic"), Bounds(), split).steps
    assert [s.outcome for s in steps] == [None, None, "checked", "accepted"]
    rmw = [Action("Acquire", 1), Action("Send", 1), Action("Deliver", 1)]
    assert replay(Design(workload="rmw"), Bounds(), rmw).steps[-1].outcome == "read"


def test_steps_have_actors_and_a_delayed_late_write_is_narrated() -> None:
    """Actors name who acted; a late write is narrated with its token and expiry."""
    actions = [
        Action("Acquire", 1),
        Action("Send", 1),
        Action("Tick"),
        Action("Tick"),
        Action("Deliver", 1),
    ]
    trace = replay(Design(), Bounds(2, 2, 4, 2, 1), actions)
    assert [s.actor for s in trace.steps] == ["coordinator", "W1", "clock", "clock", "receiver"]
    assert trace.steps[-1].sentence == (
        "W1's write carrying token 1 is accepted at t=2, after W1's lease expired at t=2; "
        "the receiver's test passes: token 1 ≥ highest token seen 0. It was sent at t=0 and "
        "delayed in the network for 2 ticks."
    )
    assert trace.steps[-1].violations == ("P2",)


def test_violation_reasons_explain_the_comparison() -> None:
    """A P3 violation under key-version tokens says the receiver compared 1 ≥ 1."""
    design = Design(token="key-version")
    verdict = explore(design, REFERENCE_BOUNDS).verdicts["P3"]
    assert verdict.actions is not None
    last = replay(design, REFERENCE_BOUNDS, verdict.actions).steps[-1]
    reason = last.reason("P3") or ""
    assert "token 1 ≥ highest token seen 1" in reason
    assert "grant #1 is older than grant #2" in reason


def test_json_round_trip_preserves_the_trace() -> None:
    """Export then import gives the same actions, states and violations."""
    trace = paused_worker_story("none").trace()
    again = trace_from_json(trace_to_json(trace))
    assert again.actions == trace.actions
    assert again.states() == trace.states()
    assert [s.violations for s in again.steps] == [s.violations for s in trace.steps]
    assert again.design == trace.design and again.bounds == trace.bounds


def _tampered(change) -> str:
    """The paused worker trace's JSON after applying `change` to its decoded object."""
    data = trace_to_dict(paused_worker_story("fenced").trace())
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d["steps"][4]["state"].update({"hwm": 7}),
            "step 5 (Send(W2)): the file says hwm=7",
        ),
        (
            lambda d: d["steps"].insert(1, {"action": {"name": "Release", "worker": 2}}),
            "step 2: Release(W2) is not enabled",
        ),
        (
            lambda d: d["steps"][0].update({"action": {"name": "Teleport"}}),
            "step 1: unknown action 'Teleport'",
        ),
        (
            lambda d: d["steps"][2].update({"action": {"name": "Send", "worker": 9}}),
            "step 3: Send(W9) is not an action",
        ),
        (
            lambda d: d["steps"][7].update({"violations": ["P1"]}),
            "step 8 (Deliver(W1)): the file says it violates",
        ),
        (lambda d: d["bounds"].update({"workers": 0}), "workers = 0"),
        (lambda d: d.update({"format": "other"}), "not a Fencing Lab trace"),
        (lambda d: d.update({"version": 9}), "unsupported trace version"),
        (lambda d: d.update({"steps": "many"}), "'steps' must be a list"),
        (lambda d: d["steps"].__setitem__(0, 5), "step 1: each step must be an object"),
    ],
)
def test_tampered_files_name_the_first_bad_step(change, message: str) -> None:
    """A malformed or tampered trace file is refused with the first bad step named."""
    with pytest.raises(TraceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        trace_from_json(_tampered(change))


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"\xff\xfe not utf8", "not UTF-8"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ("x" * 1_000_001, "the limit is 1,000,000 bytes"),
    ],
)
def test_unreadable_files_are_refused(raw: str | bytes, message: str) -> None:
    """Not UTF-8, not JSON, not an object, or too large: a one-line reason."""
    with pytest.raises(TraceError, match=message):
        trace_from_json(raw)


def test_too_long_traces_are_refused() -> None:
    """Replays are capped so an upload cannot keep a server busy."""
    with pytest.raises(TraceError, match="at most 500 steps"):
        replay(Design(), Bounds(horizon=30), [Action("Tick")] * 501)


TWO_WRITES = [
    Action("Acquire", 1),
    Action("Send", 1),
    Action("Deliver", 1),
    Action("Send", 1),
    Action("Deliver", 1),
]
"""W1 takes the lock and writes twice within its lease."""


@pytest.mark.parametrize(
    "receiver, first, second",
    [
        ("none", "", ""),
        (
            "fenced",
            "; the receiver's test passes: token 1 ≥ highest token seen 0",
            "; the receiver's test passes: token 1 ≥ highest token seen 1",
        ),
        ("fenced-strict", "; the receiver's test passes: token 1 > highest token seen 0", None),
        (
            "equality",
            "; the receiver has no mark yet and binds itself to this token",
            "; the receiver's test passes: token 1 = mark 1",
        ),
        (
            "lease-aware",
            "; the receiver asks the lock service whether the lease is current: passes",
            "; the receiver asks the lock service whether the lease is current: passes",
        ),
    ],
)
def test_each_receiver_narrates_its_own_test(receiver: str, first: str, second: str | None) -> None:
    """Each receiver's test is told with its own comparison, token and mark."""
    steps = replay(Design(receiver=receiver), Bounds(2, 2, 4, 2, 2), TWO_WRITES).steps
    accepted = "W1's write carrying token 1 is accepted at t=0, within W1's lease (until t=2)"
    assert steps[2].sentence == accepted + first + "."
    if second is None:
        assert steps[4].sentence == (
            "W1's write carrying token 1 is rejected at t=0: the receiver's test fails: "
            "token 1 > highest token seen 1 is false. This is a false rejection: W1's lease is "
            "still the current one (until t=2); told it lost the lock, W1 gives up a lock that "
            "was still its own."
        )
    else:
        assert steps[4].sentence == accepted + second + "."


def test_faults_and_split_receptions_name_their_actor() -> None:
    """Check, Apply and a store restart are the receiver's; a coordinator restart is its own."""
    split = [Action("Acquire", 1), Action("Send", 1), Action("Check", 1), Action("Apply", 1)]
    steps = replay(Design(receiver="fenced-nonatomic"), Bounds(), split).steps
    assert [s.actor for s in steps] == ["coordinator", "W1", "receiver", "receiver"]
    restart = replay(
        Design(hwm="volatile", storage_restarts=1), Bounds(), [Action("StorageRestart")]
    ).steps
    assert [s.actor for s in restart] == ["receiver"]
    lost = replay(
        Design(token="counter-volatile", coordinator_restarts=1),
        Bounds(),
        [Action("CoordinatorRestart")],
    ).steps
    assert [s.actor for s in lost] == ["coordinator"]


def test_a_store_that_checks_nothing_says_so_when_it_lets_an_older_grant_write() -> None:
    """P3's reason names the missing check when the receiver checks nothing."""
    plain = paused_worker_story("none").trace()
    late = PAUSED_WORKER_ACTIONS.index(Action("Deliver", 1))
    assert plain.steps[late].reason("P3") == (
        "P3 violated: accepted because the receiver checks nothing, but W1's grant #1 is "
        "older than grant #2, whose write was accepted before."
    )


def test_after_a_coordinator_restart_the_old_grant_is_nobodys_lease() -> None:
    """A write and a release after the coordinator forgot the lease are told as such."""
    actions = [
        Action("Acquire", 1),
        Action("Send", 1),
        Action("CoordinatorRestart"),
        Action("Deliver", 1),
        Action("Release", 1),
    ]
    design = Design(token="counter-volatile", coordinator_restarts=1)
    steps = replay(design, Bounds(2, 2, 4, 2, 1), actions).steps
    assert [s.actor for s in steps] == ["coordinator", "W1", "coordinator", "receiver", "W1"]
    assert steps[3].sentence == (
        "W1's write carrying token 1 is accepted at t=0, though W1's grant #1 is no longer "
        "the coordinator's lease; the receiver's test passes: token 1 ≥ highest token seen 0."
    )
    assert steps[4].sentence == (
        "W1 finishes at t=0; the coordinator no longer records its grant #1, so there is "
        "nothing to release."
    )


def test_a_crashed_holder_that_never_loses_the_lock_is_told_in_words() -> None:
    """Without a lease the shortest P6 run is a grant, a crash and L + 1 ticks; each step and
    the violation say what happened, with the times the model computed."""
    design = Design(receiver="none", expiry="never", crashes=1)
    verdict = explore(design, REFERENCE_BOUNDS).verdicts["P6"]
    assert verdict.actions == (
        Action("Acquire", 1),
        Action("Crash", 1),
        *[Action("Tick")] * (REFERENCE_BOUNDS.lease + 1),
    )
    trace = replay(design, REFERENCE_BOUNDS, verdict.actions)
    grant, crash, *ticks = trace.steps
    assert "held until released (the lock never expires)" in grant.sentence
    assert crash.actor == "environment"
    assert crash.sentence.startswith("W1 crashes at t=0 while it believes it holds the lock")
    assert [s.violations for s in ticks] == [(), (), ("P6",)]
    assert ticks[-1].reason("P6") == (
        "P6 violated: W1 crashed at t=0 while holding the lock; by t=3 nobody else could take "
        "it: the lock never expires."
    )


def test_a_renewal_is_told_with_the_old_and_the_new_end_of_the_lease() -> None:
    """A keepalive moves the end of the lease; a crashed holder's lease then runs out."""
    design = Design(renew=True, crashes=1)
    actions = [Action("Acquire", 1), Action("Tick"), Action("Renew", 1), Action("Crash", 1)]
    actions += [Action("Tick")] * 3 + [Action("Acquire", 2)]
    trace = replay(design, REFERENCE_BOUNDS, actions)
    renew = trace.steps[2]
    assert renew.sentence == (
        "W1 renews its lease at t=1 (a keepalive): it ran until t=2 and now runs until t=3."
    )
    assert trace.violated() == ()
    assert "grants the lock to W2" in trace.steps[-1].sentence
    assert trace.state_at(len(actions))["down[1]"] == 2
