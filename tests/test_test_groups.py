"""The parallel run keeps each `xdist_group` on one worker.

Tests that share costly work (the reference search of a preset, the compiled loops of the
Ctrl-C tests) are grouped so that one worker does it once. A pytest and pytest-xdist pair
that drops the groups does not fail those tests; it only makes the run slower. This test
runs a small suite of its own in two workers and checks where each grouped test ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GROUPED_SUITE = """
import pytest


@pytest.mark.xdist_group("together")
@pytest.mark.parametrize("index", range(6))
def test_grouped(index: int) -> None:
    pass
"""
RUN = ("-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider")


def test_grouped_tests_run_on_one_worker(tmp_path: Path) -> None:
    """Six tests of one group, two workers: every test ran, and all on the same worker."""
    (tmp_path / "test_grouped.py").write_text(GROUPED_SUITE)
    done = subprocess.run(
        [sys.executable, *RUN, str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = [line for line in done.stdout.splitlines() if " PASSED " in line]
    assert len(ran) == 6, done.stdout
    assert len({line.split()[0] for line in ran}) == 1, done.stdout
