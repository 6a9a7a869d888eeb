"""Temporary directories that name their owner, so a later run can remove abandoned ones.

Each lab directory holds `owner.pid`. A lab that is killed outright (SIGKILL) cannot
remove its own directory; its children die with it (parent-death signal), and the next
lab that starts removes every lab directory whose owner is gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

from lab.sysv_memory import release_segments_under

PREFIX: Final = "fencing-lab-"
OWNER: Final = "owner.pid"


def make_directory(kind: str) -> Path:
    """A new temporary directory `fencing-lab-<kind>-…` owned by this process."""
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-"))
    (path / OWNER).write_text(str(os.getpid()))
    return path


def _owner_alive(path: Path) -> bool:
    """Whether the process that made this directory still runs (unknown owners count as alive)."""
    try:
        pid = int((path / OWNER).read_text().strip())
    except (OSError, ValueError):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_abandoned() -> int:
    """Remove the lab directories whose owner has died; how many were removed."""
    removed = 0
    for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        if path.is_dir() and not _owner_alive(path):
            with contextlib.suppress(OSError):
                release_segments_under(path)
                shutil.rmtree(path)
                removed += 1
    return removed
