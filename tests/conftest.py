"""Shared pytest set-up: the repository root on sys.path, so `model` imports without install;
and a run that ends with its own status, whatever a native library does at interpreter exit."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REAL_TIME: tuple[str, ...] = (
    "lab/",
    "browser/test_live_lab_browser.py",
    "test_class_hall.py",
    "test_proxy_checks.py",
)
"""Tests of real services judged by real time (leases, pauses, revocations, the proxy's
health checks): they
run one at a time after the rest (`make test`), never beside a test that takes a core."""

_STATUS: list[int] = []
"""The run's exit status, once pytest has decided it."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the real-time tests `realtime`, so a parallel run can leave them for later."""
    for item in items:
        where = item.path.relative_to(ROOT / "tests").as_posix()
        if where.startswith(REAL_TIME):
            item.add_marker(pytest.mark.realtime)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Keep the run's status for the last step of pytest's shutdown."""
    _STATUS[:] = [int(exitstatus)]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End the process with the run's status once pytest has reported it: the interpreter's
    own teardown can abort (SIGABRT) in a native thread pool still alive at exit (Arrow's,
    which Streamlit's tables start), and that would turn a finished run into a crash."""
    if _STATUS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_STATUS[0])
