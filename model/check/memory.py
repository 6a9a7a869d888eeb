"""Memory and thread tuning of the breadth-first search (what it holds, never what it finds).

glibc keeps freed blocks and gives each thread its own heap; both would leave a finished
level's buffers resident. Here the search maps large blocks on their own, makes threads
share the main heap and hands freed memory back after large levels, and picks how many
threads a machine's idle cores allow.
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
_MMAP_THRESHOLD: Final = -3
"""glibc's mallopt parameter for the size from which a block gets pages of its own."""
LARGE_BLOCK: Final = 4 << 20
"""Blocks of this many bytes or more are mapped on their own and unmapped when freed."""


def map_large_blocks() -> None:
    """Give each large block pages of its own, returned to the system as soon as it is
    freed. glibc otherwise raises this threshold as large blocks are freed (up to 32 MiB),
    after which a level's buffers come from the heap and stay resident once freed, beside
    the next level's."""
    if _LIBC is not None:
        _LIBC.mallopt(_MMAP_THRESHOLD, LARGE_BLOCK)


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
