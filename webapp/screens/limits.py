"""Limits that keep one server responsive for a whole class.

Expensive work (an exploration that is not cached yet, a proof) runs under a process-wide
limit on how many run at once. A visitor past the limit waits a little, then gets a clear
"busy" message instead of a page that hangs, and can try again. Waiting is done in short
steps with a note on the page: each update of the note is where Streamlit stops a script
whose visitor has left or rerun the page, so nobody waits for a slot on behalf of a visitor
who is gone, and a slot once taken is always given back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

import streamlit as st

from webapp.content.busy import busy_sentence

HEAVY_AT_ONCE: Final = 2
"""Expensive computations allowed at the same time (the machine has two cores)."""
WAIT_SECONDS: Final = 15.0
"""How long a request waits for a free slot before it is told the server is busy."""
WAIT_STEP_SECONDS: Final = 0.25
"""How often a waiting request looks for a free slot and updates its note."""

_SLOTS = threading.BoundedSemaphore(HEAVY_AT_ONCE)


@dataclass
class _Held:
    """Whether this request holds a slot (set the moment it is taken, so it is always freed)."""

    slot: bool = False


def _take(held: _Held, wait: float) -> None:
    """Take a slot within `wait` seconds, if one comes free; a note says the request waits."""
    if _SLOTS.acquire(blocking=False):
        held.slot = True
        return
    note = st.empty()
    ends = time.monotonic() + wait
    while threading.main_thread().is_alive():  # the server is not shutting down
        left = ends - time.monotonic()
        if left <= 0:
            break
        note.caption(
            f"Waiting for a free slot while other visitors' work runs (at most {left:.0f} s more)…"
        )
        if _SLOTS.acquire(timeout=min(WAIT_STEP_SECONDS, left)):
            held.slot = True
            break
    note.empty()


@contextmanager
def heavy_work(what: str, wait: float = WAIT_SECONDS) -> Iterator[bool]:
    """Run the body when a slot is free (yields True); otherwise say the server is busy."""
    held = _Held()
    try:
        _take(held, wait)
        if not held.slot:
            st.warning(busy_sentence(what))
            yield False
            return
        yield True
    finally:
        if held.slot:
            _SLOTS.release()
