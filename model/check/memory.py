"""Memory and thread tuning of the breadth-first search (what it holds, never what it finds).

glibc keeps freed blocks and gives each thread its own heap; both would leave a finished
level's buffers resident. Here the search makes threads share the main heap and hands freed
memory back after large levels, and picks how many threads a machine's idle cores allow.
"""

from __future__ import annotations

import ctypes
import os
from typing import Final


def _c_library() -> ctypes.CDLL | None:
    """The C library, if it is glibc (which can hand freed memory back to the system)."""
    try:
        library = ctypes.CDLL("libc.so.6")
        library.malloc_trim.argtypes = [ctypes.c_size_t]
        return library
    except (OSError, AttributeError):
        return None


_LIBC = _c_library()
_ARENA_MAX: Final = -8
"""glibc's mallopt parameter for the number of heaps threads allocate from."""


def share_one_arena() -> None:
    """Make threads allocate from the main heap (glibc gives each thread its own arena
    otherwise, where a level's freed buffers would stay resident beside the main one's)."""
    if _LIBC is not None:
        _LIBC.mallopt(_ARENA_MAX, 1)


def release_free_memory() -> None:
    """Give the memory of a finished level's buffers back to the system (glibc keeps freed
    blocks otherwise), so the peak of the next level starts from the states alone."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def default_threads() -> int:
    """Two threads where a second core is idle (two cores or more, and the last minute's
    load leaves one free), else one: a busy core makes a second thread cost more than it
    gains (bench/bench_spin.py measures both)."""
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = 0.0
    return 2 if cores >= 2 and cores - busy >= 1 else 1
