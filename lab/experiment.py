"""Running scripted scenarios and randomized runs on an etcd, and writing their histories.

A run that stops before its end (Ctrl-C or SIGTERM, a process it needs dies, a time limit)
still writes what it recorded, marked partial, and raises `LabStopped` saying why and where.
Every history written gets its run folder beside it (lab.evidence): the database as the
final read found it and the processes' logs.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from etcd3gw.exceptions import Etcd3Exception

from lab.cluster import EtcdCluster
from lab.etcd import Endpoint, EtcdServer, check_reachable
from lab.evidence import keep_evidence
from lab.history import History
from lab.history_files import HistoryTarget, as_target, write_history
from lab.lock_servers import ServiceServer, server_for
from lab.nemesis import Fault
from lab.report import LabReport, analyse
from lab.runner import (
    RANDOM_GRACE_SECONDS,
    SCENARIO_LIMIT_SECONDS,
    Driver,
    Interrupted,
    LabRun,
    LabStopped,
    Progress,
    run_random,
    stop_reason,
)
from lab.scenarios import predict, scenario
from lab.settings import LabError, LabInputError, Settings


@contextlib.contextmanager
def etcd_for(
    endpoint: Endpoint | None, members: int = 1
) -> Iterator[tuple[Endpoint, float | None]]:
    """The etcd to use: the one given (checked to answer), or one started for the duration
    (a cluster of `members` members when there are more than one)."""
    if endpoint is not None:
        if members > 1:
            raise LabInputError(
                f"--members {members} starts the lab's own cluster: drop --etcd (or the "
                "FENCING_LAB_ETCD variable)"
            )
        check_reachable(endpoint)
        yield endpoint, None
        return
    if members > 1:
        with EtcdCluster(members) as cluster:
            yield cluster.endpoint, cluster.start_seconds
        return
    with EtcdServer() as server:
        assert server.endpoint is not None
        yield server.endpoint, server.start_seconds


@contextlib.contextmanager
def lock_service_for(service: str) -> Iterator[ServiceServer | None]:
    """The lock service's own server for the duration (None for the etcd services: the
    lab's etcd is theirs); a missing program or library is one line (LabInputError)."""
    server = server_for(service)
    if server is None:
        yield None
        return
    with server:
        yield server


def _signal_of(error: BaseException) -> int | None:
    """The signal behind an interrupt (Ctrl-C without the lab's handler is SIGINT)."""
    if isinstance(error, Interrupted):
        return error.signum
    return int(signal.SIGINT) if isinstance(error, KeyboardInterrupt) else None


def _carry_out(
    run: LabRun,
    body: Callable[[LabRun], None],
    target: HistoryTarget | None,
    prediction: dict[str, Any] | None = None,
) -> tuple[History, Path | None]:
    """Run `body`, wind down, and write the history; if the run stops early, write what it
    recorded (marked partial) and raise `LabStopped` (an error of the program itself still
    goes up as it is, after the partial history is written)."""
    try:
        body(run)
        run.wind_down()
        history = run.history(prediction)
        return history, _write(run, history, target)
    except BaseException as error:
        reason = stop_reason(error, run.log.now(), run.endpoint.url)
        partial = run.keep_partial(reason, prediction)
        path = _write(run, partial, target)
        if isinstance(error, LabError | KeyboardInterrupt | Etcd3Exception):
            raise LabStopped(partial.partial, partial, path, _signal_of(error)) from error
        raise


def _write(run: LabRun, history: History, target: HistoryTarget | None) -> Path | None:
    """Write the history to its target and keep the run folder beside it."""
    if target is None:
        return None
    path = write_history(history, target)
    keep_evidence(path, run.final_database, run.evidence_logs())
    return path


def run_scenario(
    endpoint: Endpoint,
    name: str,
    settings: Settings,
    history_path: HistoryTarget | Path | None = None,
    progress: Progress | None = None,
    limit_seconds: float = SCENARIO_LIMIT_SECONDS,
    service: ServiceServer | None = None,
) -> LabReport:
    """Run one scripted scenario with these settings; its history checked and saved."""
    chosen = scenario(name)
    prediction = predict(chosen, settings)
    return run_driven(
        endpoint,
        name,
        settings,
        chosen.drive,
        chosen.steps,
        history_path,
        progress,
        limit_seconds,
        prediction.to_dict(),
        service,
    )


def run_driven(
    endpoint: Endpoint,
    name: str,
    settings: Settings,
    drive: Callable[[Driver], None],
    steps: int,
    history_path: HistoryTarget | Path | None = None,
    progress: Progress | None = None,
    limit_seconds: float = SCENARIO_LIMIT_SECONDS,
    prediction: dict[str, Any] | None = None,
    service: ServiceServer | None = None,
) -> LabReport:
    """Run workers through `drive` (a scenario's steps); the history checked and saved."""

    def body(run: LabRun) -> None:
        run.start_workers()
        drive(Driver(run, steps))

    with LabRun(endpoint, settings, name, limit_seconds, progress, service) as run:
        history, path = _carry_out(run, body, as_target(history_path), prediction)
    report = analyse(history, path)
    if progress:
        progress(1.0, "done")
    return report


def run_randomized(
    endpoint: Endpoint,
    settings: Settings,
    history_path: HistoryTarget | Path | None = None,
    progress: Progress | None = None,
    faults: tuple[Fault, ...] = (),
    service: ServiceServer | None = None,
) -> LabReport:
    """Run the randomized workload with the nemesis; its history checked and saved. The
    schedule is drawn from the settings' seed, unless `faults` gives one."""
    if settings.seconds <= 0:
        raise LabInputError("a randomized run needs a duration: --seconds must be above 0")
    with LabRun(
        endpoint, settings, "random", settings.seconds + RANDOM_GRACE_SECONDS, progress, service
    ) as run:
        run.faults, run.faults_given = faults, bool(faults)
        history, path = _carry_out(run, run_random, as_target(history_path))
    report = analyse(history, path)
    if progress:
        progress(1.0, "done")
    return report
