"""Clock skew for a worker: Debian's libfaketime preloaded into its process.

A skewed worker's wall clock (`time.time()`, which it uses to check its own lease) runs
at `rate` times real time; its monotonic clock is left real, so the times it records stay
comparable with every other process's. Its timers (socket timeouts, waits) are scaled by
libfaketime as well, as a slow or fast clock would scale them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

LIBRARY_DIRECTORIES: Final = (
    Path("/usr/lib/x86_64-linux-gnu/faketime"),
    Path("/usr/lib/aarch64-linux-gnu/faketime"),
    Path("/usr/lib/faketime"),
)
"""Where Debian's libfaketime package installs its preload library (system folders only:
nothing is preloaded from a folder another user can write)."""
LIBRARY_NAME: Final = "libfaketime.so.1"


def library() -> Path | None:
    """The libfaketime preload library, or None when it is not installed."""
    for folder in LIBRARY_DIRECTORIES:
        candidate = folder / LIBRARY_NAME
        if candidate.is_file():
            return candidate
    return None


def skewed_environment(rate: float) -> dict[str, str]:
    """The environment variables that make a process's wall clock run at `rate`."""
    found = library()
    if found is None:
        return {}
    return {
        "LD_PRELOAD": str(found),
        "FAKETIME": f"+0 x{rate:g}",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }
