"""Limits that keep one server responsive for a whole class.

Expensive work (an exploration that is not cached yet, a proof) runs under a process-wide
limit on how many run at once. A visitor past the limit waits a little, then gets a clear
"busy" message instead of a page that hangs, and can try again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import streamlit as st

HEAVY_AT_ONCE: Final = 2
"""Expensive computations allowed at the same time (the machine has two cores)."""
WAIT_SECONDS: Final = 15.0
"""How long a request waits for a free slot before it is told the server is busy."""

_SLOTS = threading.BoundedSemaphore(HEAVY_AT_ONCE)


@contextmanager
def heavy_work(what: str, wait: float = WAIT_SECONDS) -> Iterator[bool]:
    """Run the body when a slot is free (yields True); otherwise say the server is busy."""
    if not _SLOTS.acquire(timeout=wait):
        st.warning(
            f"The server is busy with other visitors' work, so {what} was not started. "
            "Try again in a moment."
        )
        yield False
        return
    try:
        yield True
    finally:
        _SLOTS.release()
