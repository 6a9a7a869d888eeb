"""The CLI's state budget: as many states as this machine's available memory holds.

A run's memory grows with the states it stores (at most `BYTES_PER_STATE` each, measured
by the benchmark) on top of a fixed baseline, so the default budget is what the memory
available now holds, and a budget given on the command line that would not fit is refused
before the search starts, with the memory it would need.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from model.check.search import BYTES_PER_STATE
from model.design import DesignError

BASELINE_BYTES: Final = 512 * 2**20
"""Memory kept aside for the interpreter, the libraries and one level's successors."""
MEMINFO: Final = Path("/proc/meminfo")


def available_bytes() -> int:
    """Memory the system can give a new process now (MemAvailable), or all of it."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def memory_for(states: int) -> int:
    """Bytes a search storing this many states may need at most."""
    return BASELINE_BYTES + states * BYTES_PER_STATE


def default_max_states(available: int | None = None) -> int:
    """The most states the available memory holds."""
    room = (available if available is not None else available_bytes()) - BASELINE_BYTES
    return max(1, room // BYTES_PER_STATE)


def _gib(count: int) -> str:
    """Bytes in GiB, one decimal."""
    return f"{count / 2**30:.1f} GiB"


def resolve_max_states(requested: int | None, available: int | None = None) -> int:
    """The state budget of a run: the default from memory, or the requested one if it fits.

    Raises DesignError, naming the memory it would need, for a budget that cannot fit.
    """
    free = available if available is not None else available_bytes()
    if requested is None:
        return default_max_states(free)
    if requested < 1:
        raise DesignError("--max-states must be positive")
    needed = memory_for(requested)
    if needed > free:
        raise DesignError(
            f"a budget of {requested:,} states needs up to {_gib(needed)} of memory, but "
            f"{_gib(free)} is available: lower --max-states (at most "
            f"{default_max_states(free):,} fit) or leave it out"
        )
    return requested
