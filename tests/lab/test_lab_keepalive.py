"""Keepalives and a crashed holder on a real etcd: with a lease the lock comes free after
the kill (P6 holds), without one nobody gets it (P6 violated, as the model predicts); a
paused holder's keepalives stop, so its lease runs out. Then hand-made histories: each
refusal about keepalives and kills against an allowed control, and their mapping to the
model's Renew and Crash."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from fencing.cli import main
from lab.conformance import check_conformance, map_history
from lab.etcd import Endpoint
from lab.events import read_events
from lab.experiment import run_driven, run_scenario
from lab.history import History, history_from_dict, load_history, timeline
from lab.report import analyse
from lab.runner import Driver
from lab.scenarios import scenario
from lab.settings import LabInputError, Settings
from lab.witness import cross_check
from tests.lab.histories import (
    deliver,
    final_read,
    grant,
    nemesis,
    release,
    revoked,
    send,
    watch_put,
    witnessed,
)
from tests.lab.test_lab_scenarios import check_lesson

# ----- on the real etcd ----------------------------------------------------------------


def test_a_crashed_holders_lease_runs_out_and_the_next_worker_gets_the_lock(
    etcd: Endpoint, tmp_path: Path
) -> None:
    settings = scenario("crashed-holder").settings()
    report = run_scenario(etcd, "crashed-holder", settings, tmp_path / "lease.json")
    check_lesson(report, set(), 1, 0)
    (crash,) = report.crashes
    assert crash.worker == 1 and crash.next_worker == 2 and not crash.violated
    assert crash.next_grant is not None and crash.freed is not None
    waited = crash.next_grant - crash.killed
    assert settings.ttl * 0.5 < waited < crash.deadline - crash.killed  # after the last keepalive
    line = report.line
    grant1 = line.grants[crash.grant]
    renewals = line.renewals[crash.grant]
    assert len(renewals) >= 3 and all(t < crash.killed for t in renewals)
    assert crash.killed - grant1.t > settings.ttl  # the keepalives kept it past one TTL
    assert grant1.ended_by == "revoked" and grant1.ended is not None
    assert grant1.ended - renewals[-1] >= settings.ttl  # the lease ran one TTL from the last
    actions = [step.action.name for step in report.conformance.trace.steps]  # type: ignore[union-attr]
    assert "Renew" in actions and actions.index("Crash") < actions.index("Acquire", 1)
    data = report.to_dict()
    assert data["crashes"][0]["kill_to_grant_seconds"] == pytest.approx(waited, abs=1e-5)
    assert data["properties"]["P6"] == {"violated": False, "count": 0, "exercised": 1}
    assert "W2 got the lock" in report.text()


def test_without_a_lease_nobody_gets_the_lock_after_the_crash(
    etcd: Endpoint, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "never.json"
    args = ["lab", "run", "crashed-holder", "--expiry", "never", "--etcd", etcd.url, "--json"]
    assert main([*args, "--history", str(path)]) == 0  # the model predicted the violation
    data = json.loads(capsys.readouterr().out)
    assert data["expiry"] == "never" and data["keepalive"] == 0
    assert data["properties"]["P6"] == {"violated": True, "count": 1, "exercised": 1}
    assert data["prediction"]["properties"]["P6"]["violated"] is True
    assert data["prediction"]["agrees"] is True
    (crash,) = data["crashes"]
    assert crash["next_grant"] is None and crash["freed"] is None
    assert crash["waited_seconds"] > crash["deadline"] - crash["killed"]
    assert data["final_read"]["locks"][0]["lease"] == 0  # the key outlived its dead holder
    report = analyse(load_history(path))
    check_lesson(report, {"P6"}, 0, 0)
    assert len(report.line.grants) == 1
    assert not any(e.kind == "renew" for e in report.line.events)
    assert report.conformance.agreement["P6"] == (1, 1)
    failed = [e for e in report.line.events if e.kind == "fail" and e.get("op") == "acquire"]
    assert [e.worker for e in failed] == [2]


def _paused_with_keepalives(d: Driver) -> None:
    """W1 holds the lock with keepalives, is paused until etcd revokes its lease, W2 takes
    the lock, writes and releases; W1 resumes, its next keepalive comes too late."""
    ttl = d.run.settings.ttl
    d.acquire(1)
    d.hold_for(1.5 * ttl)
    d.pause(1)
    d.wait_lease_end(1)
    d.acquire(2)
    d.write(2)
    d.release(2)
    d.resume(1)

    def too_late() -> bool:
        events = read_events(d.run.directory / "w1.jsonl")
        return any(e["kind"] == "fail" and e.get("op") == "renew" for e in events)

    d.run.wait_until(too_late, "W1's keepalive after it resumed")


def test_a_paused_holder_loses_its_lease_because_its_keepalives_stop(
    etcd: Endpoint, tmp_path: Path
) -> None:
    settings = Settings(receiver="fenced", keepalive=0.25)
    report = run_driven(
        etcd, "paused-keepalive", settings, _paused_with_keepalives, 8, tmp_path / "h.json"
    )
    line = report.line
    paused = next(e for e in line.events if e.kind == "pause")
    resumed = next(e for e in line.events if e.kind == "resume")
    mine = [e for e in line.events if e.worker == 1]
    renews = [float(e.get("asked")) for e in mine if e.kind == "renew"]
    asked = [e.t for e in mine if e.kind == "invoke" and e.get("op") == "renew"]
    stopped = float(paused.get("stopped_at"))  # SIGSTOP seen delivered (asked for at paused.t)
    assert len(renews) >= 3 and max(renews) < stopped  # renewals asked for before the pause
    assert not [t for t in asked if stopped < t < resumed.t]  # none while it was stopped
    grant1 = line.grants[int(mine[1].get("revision"))]
    assert grant1.ended_by == "revoked" and grant1.ended is not None
    assert stopped < grant1.ended < resumed.t
    assert grant1.ended - max(renews) >= settings.ttl  # one TTL after its last keepalive
    heard_late = [e for e in mine if e.kind == "renew" and e.t > stopped]
    assert all(float(e.get("asked")) < stopped for e in heard_late)  # asked before SIGSTOP
    late = [e for e in mine if e.kind == "fail" and e.get("op") == "renew"]
    assert late and late[0].t > resumed.t and "expired" in str(late[0].get("error"))
    assert len(line.grants) == 2
    assert not report.refused, report.text()
    assert report.conformance.allowed, report.conformance.verdict()
    assert report.conformance.properties_agree


def _kept_then_written(d: Driver) -> None:
    """W1 takes the lock, keeps it two TTLs with its keepalives, then writes and releases."""
    d.acquire(1)
    d.hold_for(2 * d.run.settings.ttl)
    d.write(1)
    d.release(1)


def test_a_worker_that_checks_its_lease_counts_it_from_its_last_keepalive(
    etcd: Endpoint, tmp_path: Path
) -> None:
    """As the model's Renew moves the worker's own deadline on, a keepalive the worker saw
    taken moves its lease check on: two TTLs after the grant its write is still sent."""
    settings = Settings(receiver="fenced", keepalive=0.25, worker_check=True)
    report = run_driven(etcd, "kept", settings, _kept_then_written, 4, tmp_path / "h.json")
    mine = [e for e in report.line.events if e.worker == 1]
    assert not [e for e in mine if e.kind == "lease-check"], report.text()
    grant1 = next(e for e in mine if e.kind == "grant")
    sent = next(e for e in mine if e.kind == "send")
    assert sent.t - grant1.t > 2 * settings.ttl * 0.9
    assert report.counts.accepted == 1
    assert report.conformance.allowed, report.conformance.verdict()
    assert report.conformance.properties_agree


# ----- hand-made histories --------------------------------------------------------------


def renew(t: float, w: int, revision: int, asked: float | None = None) -> dict[str, Any]:
    """etcd took W's keepalive for the grant with this revision."""
    return {
        "t": t,
        "source": f"W{w}",
        "kind": "renew",
        "worker": w,
        "grant": revision,
        "lease": 1000 + revision,
        "ttl": 1,
        "asked": round(t - 0.002, 6) if asked is None else asked,
    }


def crash(t: float, w: int) -> dict[str, Any]:
    """The nemesis killed W."""
    return {"t": t, "source": "lab", "kind": "crash", "worker": w, "asked": round(t - 0.001, 6)}


def codes(history: History) -> set[str]:
    """The refusal codes of a history's cross-checks."""
    return {found.code for found in cross_check(timeline(history)).impossible}


def with_settings(history: History, **changes: Any) -> History:
    """The history with some settings changed."""
    return dataclasses.replace(history, settings=dataclasses.replace(history.settings, **changes))


LATE_REVOKE = {"revoke2": revoked(2.0, 2, 4, 5), "final": final_read(2.1, 2_000_001, 2, 4, [])}
"""W2's lease revoked at 2.0 s, about 1.6 s after its keepalive at 0.40 s."""
NO_LEASE = {"revoke2": None, "final": final_read(1.6, 2_000_001, 2, 4, [4])}
"""W2's key, put with no lease, still there at the end."""

REFUSALS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "renewed while paused",
        {**LATE_REVOKE, "extra": [*[nemesis(0.45, "pause", 2)], renew(0.6, 2, 4)]},
        "renew-while-down",
        "W2 recorded 'renew' at 0.600 s while it was stopped (SIGSTOP at 0.450 s, never resumed)",
    ),
    (
        "renewed after the kill",
        {**LATE_REVOKE, "extra": [crash(0.45, 2), renew(0.6, 2, 4)]},
        "renew-while-down",
        "W2 recorded 'renew' at 0.600 s, after the nemesis killed it (SIGKILL at 0.450 s): a "
        "dead worker sends no keepalive",
    ),
    (
        "sent after the kill",
        {"extra": [crash(0.31, 2)]},
        "step-after-crash",
        "W2 recorded 'send' at 0.320 s, after the nemesis killed it (SIGKILL at 0.310 s)",
    ),
    (
        "renewed after the revocation",
        {"extra": [renew(2.5, 2, 4)]},
        "renew-after-end",
        "etcd took W2's keepalive for grant 4, asked for at 2.498 s, but etcd revoked its "
        "lease at 1.450 s: a lease that has ended cannot be kept alive",
    ),
]


@pytest.mark.parametrize(
    ("changes", "code", "sentence"),
    [item[1:] for item in REFUSALS],
    ids=[item[0] for item in REFUSALS],
)
def test_each_impossible_keepalive_or_kill_is_refused(
    changes: dict[str, Any], code: str, sentence: str
) -> None:
    found = cross_check(timeline(witnessed(**changes))).impossible
    assert code in {f.code for f in found}
    assert sentence in [f.reason for f in found if f.code == code]


def test_keepalives_before_a_pause_and_a_kill_after_the_last_step_are_allowed() -> None:
    history = witnessed(
        **LATE_REVOKE,
        extra=[renew(0.4, 2, 4), nemesis(0.45, "pause", 2), crash(0.5, 2)],
    )
    assert codes(history) == set()
    report = analyse(with_settings(history, keepalive=0.3))
    assert not report.refused, report.text()
    names = [m.action.name for m in report.conformance.mapping.actions]
    assert "Crash" in names


def test_a_grant_while_a_key_without_a_lease_exists_is_refused() -> None:
    double = with_settings(witnessed(**NO_LEASE, release1=None, delete1=None), expiry="never")
    double = dataclasses.replace(
        double, events=tuple(e for e in double.events if e["kind"] != "final-read")
    )
    found = cross_check(timeline(double)).impossible
    assert [f.code for f in found] == ["double-grant"]
    assert found[0].reason.endswith("two holders at once (a key put with no lease never expires)")
    control = with_settings(witnessed(**NO_LEASE), expiry="never")
    assert codes(control) == set()


def test_a_key_without_a_lease_that_vanishes_is_refused() -> None:
    history = with_settings(witnessed(), expiry="never")
    found = cross_check(timeline(history)).impossible
    assert [f.code for f in found] == ["no-lease-revoked"]
    assert "put with no lease, so nothing could expire" in found[0].reason


def _crashed_holder(expiry: str, waited: float) -> History:
    """W1 granted at 0.10 s, renewing (with a lease) every 0.3 s, killed at 1.30 s; with a
    lease etcd revokes it at 2.60 s and W2 is granted at 2.62 s, writes and releases; the
    run ends `waited` seconds after the kill."""
    leased = expiry == "lease"
    events: list[dict[str, Any]] = [
        grant(0.10, 1, 2, asked=0.09, **({} if leased else {"lease": 0, "ttl": 0})),
        watch_put(0.101, 1, 2),
        crash(1.30, 1),
    ]
    if leased:
        events += [renew(0.4 + 0.3 * n, 1, 2) for n in range(3)]
        events += [
            revoked(2.60, 1, 2, 3),
            grant(2.62, 2, 4, asked=2.61),
            watch_put(2.621, 2, 4),
            send(2.64, 2, 1, 4, 4),
            deliver(2.65, 2, 1, 4, 4, "accepted"),
            release(2.70, 2, 4, True, 5),
        ]
    events.append(final_read(1.30 + waited, 0, 0, None, [] if leased else [2]))
    settings = Settings(expiry=expiry, keepalive=0.3 if leased else 0.0)
    return History("crashed-holder", settings, tuple(events))


def test_keepalives_map_to_renew_and_the_kill_to_crash() -> None:
    line = timeline(_crashed_holder("lease", 1.5))
    mapping = map_history(line, 2)
    names = [m.action.name for m in mapping.actions if m.action.name != "Tick"]
    assert names[0] == "Acquire" and names.count("Renew") >= 1
    assert names.index("Crash") > names.index("Renew") and names[-4:] == [
        "Acquire",
        "Send",
        "Deliver",
        "Release",
    ]
    result = check_conformance(line)
    assert result.allowed, result.verdict()
    assert result.design.renew and result.design.crashes == 1
    assert result.agreement["P6"] == (0, 0)
    renewed = [s for s in result.trace.steps if s.action.name == "Renew"]  # type: ignore[union-attr]
    assert all(s.after != s.before for s in renewed)  # each Renew moves the lease's end


def test_the_model_and_the_history_agree_a_lock_without_a_lease_is_never_freed() -> None:
    stuck = timeline(_crashed_holder("never", 4.0))
    result = check_conformance(stuck)
    assert result.allowed and result.design.expiry == "never"
    assert result.agreement["P6"] == (1, 1)
    early = check_conformance(timeline(_crashed_holder("never", 0.4)))  # ended before the deadline
    assert early.allowed and early.agreement["P6"] == (0, 0)


def test_old_histories_read_as_a_lease_never_renewed() -> None:
    data = json.loads(json.dumps(witnessed().to_dict()))
    for name in ("expiry", "keepalive"):
        data["settings"].pop(name)
    history = history_from_dict(data)
    assert (history.settings.expiry, history.settings.keepalive) == ("lease", 0.0)
    data["settings"]["expiry"] = "sometimes"
    with pytest.raises(LabInputError, match="expiry 'sometimes' is not known"):
        history_from_dict(data)


def test_a_crash_as_the_nemesis_records_it_maps_to_crash_as_well() -> None:
    """A randomized run's crash (pid, no `asked`: histories recorded before the two were
    one function) is the same Crash(w) as a scenario's."""
    scripted = _crashed_holder("lease", 1.5)
    events = [
        {"t": e["t"], "source": "lab", "kind": "crash", "worker": e["worker"], "pid": 4242}
        if e["kind"] == "crash"
        else e
        for e in scripted.events
    ]
    settings = dataclasses.replace(scripted.settings, seconds=3.0, faults="crash", workers=2)
    line = timeline(History("random", settings, tuple(events)))
    names = [m.action.name for m in map_history(line, 2).actions]
    assert names.count("Crash") == 1 and names.index("Crash") > names.index("Renew")
    result = check_conformance(line)
    assert result.allowed, result.verdict()
    assert result.design.crashes == 1 and result.agreement["P6"] == (0, 0)


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        ({"lock_service": "zookeeper", "token": "sequence", "keepalive": 0.3}, "kazoo keeps"),
        ({"lock_service": "etcd-lock-api", "expiry": "never"}, "only the etcd recipe"),
        ({"lock_service": "redis", "token": "random", "expiry": "never"}, "only the etcd recipe"),
        ({"lock_service": "zookeeper", "token": "sequence", "expiry": "never"}, "only the etcd"),
    ],
)
def test_a_service_refuses_what_it_cannot_give_in_one_line(
    flags: dict[str, Any], words: str
) -> None:
    with pytest.raises(LabInputError, match=words) as refused:
        Settings(**flags)
    assert "\n" not in str(refused.value)


def test_the_etcd_services_and_redis_take_keepalives() -> None:
    for service, token in (("etcd", "version"), ("etcd-lock-api", "version"), ("redis", "counter")):
        assert Settings(lock_service=service, token=token, keepalive=0.3).renews
    assert Settings(lock_service="etcd", expiry="never").expiry == "never"


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "crashed-holder", "--lock-service", "zookeeper"],
        ["run", "crashed-holder", "--lock-service", "redis", "--expiry", "never"],
        ["random", "--lock-service", "zookeeper", "--keepalive", "0.3", "--seconds", "1"],
        ["random", "--lock-service", "etcd-lock-api", "--expiry", "never", "--seconds", "1"],
    ],
)
def test_the_cli_refuses_them_in_one_line_before_starting_anything(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lab", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err


def test_the_listing_says_which_scenario_a_service_cannot_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["lab", "scenarios", "--lock-service", "zookeeper", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)["scenarios"]}
    assert rows["crashed-holder"]["refused"].startswith("kazoo keeps the ZooKeeper session")
    assert "refused" not in rows["paused-worker"] and rows["paused-worker"]["prediction"]
    assert main(["lab", "scenarios", "--lock-service", "redis", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)["scenarios"]}
    assert "refused" not in rows["crashed-holder"]
    assert rows["crashed-holder"]["variants"] == []  # no lock without a lease on Redis


def test_random_runs_with_keepalives_and_without_a_lease(
    etcd: Endpoint, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fencing lab random --keepalive` renews the holders' leases; `--expiry never` puts
    the lock with no lease (the nemesis only pauses: nobody crashes while holding it)."""
    common = ["lab", "random", "--workers", "2", "--seconds", "2", "--etcd", etcd.url, "--json"]
    path = tmp_path / "renewed.json"
    assert main([*common, "--keepalive", "0.2", "--history", str(path)]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    history = load_history(path)
    assert history.settings.keepalive == 0.2
    assert any(e["kind"] == "renew" for e in history.events), data
    path = tmp_path / "never.json"
    assert main([*common, "--expiry", "never", "--faults", "pause", "--history", str(path)]) in (
        0,
        1,
    )
    capsys.readouterr()
    history = load_history(path)
    grants = [e for e in history.events if e["kind"] == "grant"]
    assert history.settings.expiry == "never" and grants
    assert all(e["lease"] == 0 for e in grants)
    assert not any(e["kind"] == "revoked" for e in history.events)
