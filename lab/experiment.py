"""Running scripted scenarios and randomized runs on an etcd, and writing their histories."""

from __future__ import annotations

import contextlib
import datetime
import re
from collections.abc import Iterator
from pathlib import Path

from lab.etcd import Endpoint, EtcdServer, check_reachable
from lab.history import History, history_to_json
from lab.report import LabReport, analyse
from lab.runner import (
    RANDOM_GRACE_SECONDS,
    SCENARIO_LIMIT_SECONDS,
    Driver,
    LabRun,
    Progress,
    run_random,
)
from lab.scenarios import predict, scenario
from lab.settings import LabInputError, Settings


@contextlib.contextmanager
def etcd_for(endpoint: Endpoint | None) -> Iterator[tuple[Endpoint, float | None]]:
    """The etcd to use: the one given (checked to answer), or one started for the duration."""
    if endpoint is not None:
        check_reachable(endpoint)
        yield endpoint, None
        return
    with EtcdServer() as server:
        assert server.endpoint is not None
        yield server.endpoint, server.start_seconds


def default_history_path(name: str, settings: Settings) -> Path:
    """`lab-<scenario>-<receiver>-<time>.json` in the current directory."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^a-z0-9-]", "-", name.lower())[:40]
    return Path(f"lab-{safe}-{settings.receiver}-{stamp}.json")


def save(history: History, path: Path | None) -> Path | None:
    """Write the history file (None: keep it in memory only)."""
    if path is None:
        return None
    try:
        path.write_text(history_to_json(history))
    except OSError as error:
        raise LabInputError(f"cannot write the history file {path}: {error.strerror}") from None
    return path


def run_scenario(
    endpoint: Endpoint,
    name: str,
    settings: Settings,
    history_path: Path | None = None,
    progress: Progress | None = None,
    limit_seconds: float = SCENARIO_LIMIT_SECONDS,
) -> LabReport:
    """Run one scripted scenario with these settings; its history checked and saved."""
    chosen = scenario(name)
    prediction = predict(chosen, settings)
    with LabRun(endpoint, settings, name, limit_seconds, progress) as run:
        run.start_workers()
        chosen.drive(Driver(run, chosen.steps))
        run.wind_down()
        history = run.history(prediction.to_dict())
    report = analyse(history, save(history, history_path))
    if progress:
        progress(1.0, "done")
    return report


def run_randomized(
    endpoint: Endpoint,
    settings: Settings,
    history_path: Path | None = None,
    progress: Progress | None = None,
) -> LabReport:
    """Run the randomized workload with the nemesis; its history checked and saved."""
    if settings.seconds <= 0:
        raise LabInputError("a randomized run needs a duration: --seconds must be above 0")
    with LabRun(
        endpoint, settings, "random", settings.seconds + RANDOM_GRACE_SECONDS, progress
    ) as run:
        run_random(run)
        run.wind_down()
        history = run.history()
    report = analyse(history, save(history, history_path))
    if progress:
        progress(1.0, "done")
    return report
