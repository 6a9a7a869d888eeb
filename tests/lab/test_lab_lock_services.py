"""Every scripted scenario on each real lock service (etcd's lock API, ZooKeeper, Redis),
started by the test on free loopback ports and stopped after: the history agrees with the
model's prediction and conforms, or shows the service's documented difference."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Final

import pytest

from lab.etcd import Endpoint
from lab.experiment import run_scenario
from lab.history import History, load_history
from lab.history_schema import settings_of
from lab.lock_clients import RANDOM_HEX_DIGITS, Granted, lock_client
from lab.lock_servers import ServiceServer, missing_requirement, server_for
from lab.lock_table import SERVICES, SERVICES_LIST
from lab.report import LabReport
from lab.scenarios import SCENARIO_NAMES, planned_actions, scenario
from lab.settings import LabInputError, Settings
from model.design import Bounds
from model.formats.trace import replay
from model.rules import Action
from model.system import System
from tests.cli_helpers import run

OTHER_SERVICES = ("etcd-lock-api", "zookeeper", "redis")
NEEDS_KEEPALIVES: Final = {"crashed-holder"}
"""Scenarios whose holder keeps its lease alive (ZooKeeper takes no keepalives here)."""
NEEDS_VERSION: Final = {"version-token"}
"""Scenarios whose lesson is the key's version as the token (ZooKeeper and Redis have none)."""


@pytest.fixture
def servers(lock_servers: dict[str, ServiceServer]) -> dict[str, ServiceServer]:
    """ZooKeeper and Redis as the session started them (each run keeps to its own keys)."""
    return lock_servers


def service_of(name: str, servers: dict[str, ServiceServer]) -> ServiceServer | None:
    """The started server of a service (None for etcd's lock API); skip if it is missing."""
    missing = missing_requirement(name)
    if missing:
        pytest.skip(missing)
    return servers.get(name)


def run_on(
    service: str, name: str, etcd: Endpoint, servers: dict[str, ServiceServer], path: Path
) -> LabReport:
    """One scenario with its default design on a lock service."""
    server = service_of(service, servers)
    settings = scenario(name).settings(lock_service=service)
    return run_scenario(etcd, name, settings, path, service=server)


def rising(report: LabReport) -> bool:
    """Whether the run's two grants handed out rising tokens (W1's below W2's)."""
    tokens = [int(g.token) for g in report.line.grants.values()]
    return tokens == sorted(tokens)


@pytest.mark.parametrize("service", OTHER_SERVICES)
@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_scenario_on_each_service_agrees_with_the_model(
    service: str, name: str, etcd: Endpoint, servers: dict[str, ServiceServer], tmp_path: Path
) -> None:
    if service == "zookeeper" and name in NEEDS_KEEPALIVES:
        with pytest.raises(LabInputError, match=r"^kazoo keeps the ZooKeeper session"):
            scenario(name).settings(lock_service=service)
        return
    if name in NEEDS_VERSION and service in ("zookeeper", "redis"):
        with pytest.raises(LabInputError, match=r"^the version-token scenario's lesson is"):
            scenario(name).settings(lock_service=service)
        return
    report = run_on(service, name, etcd, servers, tmp_path / "history.json")
    assert not report.refused, report.text()
    assert report.conformance.allowed, report.conformance.verdict()
    assert report.conformance.properties_agree, report.conformance.agreement
    history = load_history(tmp_path / "history.json")
    assert history.settings.lock_service == service
    assert history.events == report.history.events
    # The model's plan hands out rising tokens; only a random one may come out lower.
    random = SERVICES[service].token(history.settings.token).model == "random"
    assert report.prediction_agrees or (random and not rising(report)), report.text()


@pytest.mark.parametrize("service", ["etcd-lock-api", "redis"])
def test_the_crashed_holder_keeps_its_lock_alive_until_the_kill(
    service: str, etcd: Endpoint, servers: dict[str, ServiceServer], tmp_path: Path
) -> None:
    """etcd's lock API renews the caller's lease as the recipe does; Redis extends the
    lock's expiry (redis-py's `Lock.extend`): either way W1 holds it past one TTL, and
    once it is killed the lock comes free and W2 gets it."""
    report = run_on(service, "crashed-holder", etcd, servers, tmp_path / "h.json")
    settings = report.history.settings
    assert settings.renews and settings.lock_service == service
    (crash,) = report.crashes
    assert crash.worker == 1 and crash.next_worker == 2 and not crash.violated, report.text()
    renewals = report.line.renewals[crash.grant]
    assert len(renewals) >= 3 and all(t < crash.killed for t in renewals)
    assert crash.killed - report.line.grants[crash.grant].t > settings.ttl
    refused = [e for e in report.line.events if e.kind == "fail" and e.get("op") == "renew"]
    assert not refused, report.text()


def test_zookeeper_paused_holder_still_believes_it_holds_the_lock(
    etcd: Endpoint, servers: dict[str, ServiceServer], tmp_path: Path
) -> None:
    """kazoo's Lock still reports the lock held after the paused holder's session expired
    (and ZooKeeper deleted its znode): the worker sends its write believing it holds it."""
    report = run_on("zookeeper", "paused-worker", etcd, servers, tmp_path / "h.json")
    events = report.line.events
    revoked = [e for e in events if e.kind == "revoked" and e.worker == 1]
    late = [e for e in events if e.kind == "send" and e.worker == 1]
    assert revoked and late, report.text()
    assert revoked[0].t < late[0].t
    assert late[0].get("client_says_held") is True
    assert report.prediction_agrees, report.text()


def test_redis_random_token_cannot_be_fenced(
    etcd: Endpoint, servers: dict[str, ServiceServer], tmp_path: Path
) -> None:
    """The random token is redis-py's lock value as a number; the fenced store compares it
    as it comes, and the model, handed the same grants in the other order (as a random
    value may be), shows the fenced store accepting the stale write."""
    server = service_of("redis", servers)
    chosen = scenario("paused-worker")
    settings = chosen.settings(lock_service="redis", receiver="fenced")
    assert settings.token == "random"
    path = tmp_path / "h.json"
    report = run_scenario(etcd, "paused-worker", settings, path, service=server)
    grants = [e for e in report.line.events if e.kind == "grant"]
    assert len(grants) == 2
    for grant in grants:
        value = str(grant.get("lock_value"))
        assert int(grant.get("token")) == int(value[:RANDOM_HEX_DIGITS], 16)
    first, second = (int(g.get("token")) for g in grants)
    assert report.counts.rejected == (1 if first < second else 0), report.text()
    settings = report.history.settings
    trace = report.conformance.trace
    assert trace is not None and trace.design.token == "random"
    bounds = Bounds(settings.workers, 2, 20, 2, settings.writes)
    system = System(trace.design, bounds)
    actions = planned_actions(chosen.plan(settings), system)
    values = iter((2, 1))  # the second grant's value below the first's
    swapped = [replace(a, value=next(values)) if a.name == "Acquire" else a for a in actions]
    assert next(a for a in swapped if a.name == "Acquire") == Action("Acquire", 1, 2)
    ticks = sum(1 for a in swapped if a.name == "Tick")
    lesson = replay(trace.design, Bounds(settings.workers, 2, ticks, 2, settings.writes), swapped)
    violated = {name for step in lesson.steps for name in step.violations}
    assert violated == {"P2", "P3"}  # the stale write is accepted: the token fenced nothing
    assert not any(step.outcome == "rejected" for step in lesson.steps)


def test_the_table_offers_each_service_its_tokens() -> None:
    assert [s.name for s in SERVICES_LIST] == ["etcd", "etcd-lock-api", "zookeeper", "redis"]
    with pytest.raises(LabInputError, match="makes no sense with the zookeeper"):
        Settings(lock_service="zookeeper", token="version")
    with pytest.raises(LabInputError, match="etcd-txn"):
        Settings(lock_service="redis", token="random", receiver="etcd-txn")
    assert settings_of({"receiver": "none"}).lock_service == "etcd"
    assert scenario("paused-worker").settings(lock_service="zookeeper").token == "sequence"
    with pytest.raises(LabInputError, match="which ZooKeeper does not give"):
        scenario("version-token").settings(lock_service="zookeeper")


def test_a_token_the_service_does_not_offer_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        ["lab", "run", "paused-worker", "--lock-service", "zookeeper", "--token", "version"],
        capsys,
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "offers sequence" in err


def test_a_missing_service_program_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    for service, words in (("redis", "redis-server"), ("zookeeper", "ZooKeeper lock needs")):
        code, out, err = run(["lab", "run", "paused-worker", "--lock-service", service], capsys)
        assert code == 2 and out == "", err
        assert err.count("\n") == 1 and words in err and "Traceback" not in err


def test_the_live_lab_page_runs_a_scenario_on_the_chosen_service(
    etcd: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page offers the lock service, states the model's prediction for it, runs the
    scenario on a Redis of its own and shows the verdict; the shared Redis is stopped after."""
    from streamlit.testing.v1 import AppTest

    from lab.etcd import ETCD_ENV
    from lab.lock_servers import SHARED_SERVICES
    from lab.scenarios import predict
    from tests.app.helpers import all_text, switch_to

    if missing_requirement("redis"):
        pytest.skip(missing_requirement("redis"))
    monkeypatch.setenv(ETCD_ENV, etcd.url)
    app = Path(__file__).resolve().parents[2] / "webapp" / "app.py"
    at = AppTest.from_file(str(app), default_timeout=120)
    at.run()
    switch_to(at, "lab")
    at.run()
    try:
        at.selectbox(key="lab-service").set_value("redis").run()
        chosen = scenario("paused-worker")
        settings = chosen.settings(lock_service="redis")
        assert settings.token == "random"
        assert predict(chosen, settings).summary() in all_text(at)
        at.button(key="lab-run").click().run()
        assert not at.exception, [e.value for e in at.exception]
        text = all_text(at)
        assert "Reality agreed with the model's prediction." in text, text[:2000]
        assert "lock redis" in text
    finally:
        server = SHARED_SERVICES.servers.pop("redis", None)
        if server is not None:
            server.stop()


def test_redis_counter_token_fences_the_paused_worker(
    etcd: Endpoint, servers: dict[str, ServiceServer], tmp_path: Path
) -> None:
    """The INCR counter rises with each grant, so the fenced store refuses the stale write,
    as the model's counter predicts."""
    server = service_of("redis", servers)
    settings = scenario("version-token").settings(lock_service="redis", token="counter")
    report = run_scenario(etcd, "version-token", settings, tmp_path / "h.json", service=server)
    assert [int(g.token) for g in report.line.grants.values()] == [1, 2]
    assert (report.counts.accepted, report.counts.rejected) == (1, 1), report.text()
    assert report.prediction_agrees and report.conformance.allowed, report.text()


def _redis_commands_during(url: str, work: Callable[[], object]) -> list[tuple[str, str]]:
    """(who sent it: `lua` or `tcp`, the command's name) of every command Redis ran while
    `work` ran, as its MONITOR reports them."""
    import redis

    watcher = redis.Redis.from_url(url, socket_timeout=5.0)
    seen: list[tuple[str, str]] = []
    with watcher.monitor() as monitor:  # Redis has answered MONITOR when the block starts
        work()
        watcher.echo("end of work")
        while (line := monitor.next_command())["command"] != "ECHO end of work":
            seen.append((line["client_type"], line["command"].split()[0].upper()))
    return seen


def test_a_redis_grant_is_set_and_numbered_by_one_atomic_script(
    servers: dict[str, ServiceServer],
) -> None:
    """The key's SET, the grant counter's INCR, the holder's name and the grant's line in the
    log are run by Redis inside one script: no worker paused between its SET and its number
    can be numbered after a later grant. A refused SET numbers (and logs) nothing."""
    server = service_of("redis", servers)
    assert server is not None and server.address is not None
    url = server.address.url
    first, second = (lock_client("redis", url, "atomic/", 1, "counter") for _ in range(2))
    grants: list[object] = []

    def contend() -> None:
        grants.append(first.try_acquire("W1"))
        grants.append(second.try_acquire("W2"))

    commands = _redis_commands_during(url, contend)
    held, refused = grants
    assert isinstance(held, Granted) and refused is None
    assert (held.revision, held.token) == (1, 1)
    writes = [(who, name) for who, name in commands if name in ("SET", "INCR", "HSET", "RPUSH")]
    assert writes == [
        ("lua", "SET"),
        ("lua", "INCR"),
        ("lua", "HSET"),
        ("lua", "RPUSH"),
        ("lua", "SET"),
    ]
    asked = {name for who, name in commands if who == "tcp"} - {"HELLO"}  # a new connection
    assert asked <= {"EVALSHA", "EVAL", "SCRIPT"}
    first.release(held)
    again = second.try_acquire("W2")
    assert again is not None and (again.revision, again.token) == (2, 2)


@pytest.mark.parametrize("service", OTHER_SERVICES)
def test_a_randomized_run_on_each_service_is_consistent(
    service: str, etcd: Endpoint, servers: dict[str, ServiceServer], tmp_path: Path
) -> None:
    """Workers loop while the nemesis pauses them: no witness contradicts another, no grant
    is doubled, and the model refuses no event it checked."""
    from lab.experiment import run_randomized

    server = service_of(service, servers)
    settings = Settings(
        receiver="fenced",
        token=SERVICES[service].token_names[0],
        lock_service=service,
        workers=3,
        writes=2,
        seconds=3.0,
        pause_rate=2.0,
        seed=7,
    )
    report = run_randomized(etcd, settings, tmp_path / "h.json", service=server)
    assert report.line.grants, report.text()
    assert not report.witnessed.impossible, report.witnessed.impossible
    assert report.conformance.refused is None, report.conformance.verdict()


def zookeeper_history(end_seen: float) -> History:
    """The consistent witnessed run, as ZooKeeper numbers it: W1's release is replaced by
    its session's end, seen by the poll at `end_seen` under W1's own grant number."""
    from tests.lab.histories import revoked, witnessed

    base = witnessed(release1=None, delete1=revoked(end_seen, 1, 2, 2), revoke2=None)
    final = next(e for e in base.events if e["kind"] == "final-read")
    final["locks"] = [{"create_revision": 4, "lease": 1004, "holder": "W2"}]
    settings = Settings(receiver="fenced", token="sequence", lock_service="zookeeper")
    return replace(base, settings=settings)


def test_a_zookeeper_grant_while_the_last_lock_was_still_seen_is_a_double_grant() -> None:
    """ZooKeeper gives the end of a lock no number of the grants' order: a grant made more
    than one request's latency before the previous lock was seen to end is refused."""
    from lab.history import timeline
    from lab.witness import cross_check

    assert cross_check(timeline(zookeeper_history(0.25))).impossible == ()
    found = cross_check(timeline(zookeeper_history(1.2))).impossible
    assert "double-grant" in [f.code for f in found]
    assert any("ZooKeeper granted the lock to W2 (grant 4)" in f.reason for f in found)


@pytest.mark.parametrize("service", ["zookeeper", "redis"])
def test_a_lock_service_that_dies_stops_the_run_in_one_sentence(
    service: str, etcd: Endpoint
) -> None:
    """The service is killed while the paused worker waits for its lock to end: the run
    stops at once, says which process died, and keeps what it recorded, marked partial."""
    from lab.runner import LabStopped

    if missing_requirement(service):
        pytest.skip(missing_requirement(service))
    server = server_for(service)
    assert server is not None

    def kill_once_paused(_: float, words: str) -> None:
        if words == "W1 paused" and server.child is not None:
            server.child.kill()

    with server:
        settings = scenario("paused-worker").settings(lock_service=service)
        with pytest.raises(LabStopped) as stopped:
            run_scenario(etcd, "paused-worker", settings, None, kill_once_paused, service=server)
    assert stopped.value.reason.startswith(f"{service} was killed by SIGKILL, seen ")
    assert stopped.value.history.partial == stopped.value.reason


def test_lab_services_lists_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code, out, _ = run(["lab", "services", "--json"], capsys)
    assert code == 0
    rows = json.loads(out)["services"]
    assert [row["name"] for row in rows] == [s.name for s in SERVICES_LIST]
    for row, service in zip(rows, SERVICES_LIST, strict=True):
        assert [t["name"] for t in row["tokens"]] == list(service.token_names)
        assert [t["model_token"] for t in row["tokens"]] == [t.model for t in service.tokens]
        assert row["missing"] == missing_requirement(service.name)
    code, out, _ = run(["lab", "services"], capsys)
    assert code == 0 and "--token sequence (model: counter)" in out
