"""The process's slots for heavy work, so one server stays responsive for a whole class.

Expensive work (an exploration that is not cached yet, a proof, the check of an exercise
set) runs only while it holds one of `HEAVY_AT_ONCE` slots. This module is plain code: a
page waits for a slot through `webapp.screens.limits` (which tells its visitor it waits),
the background set checker through `held_slot` directly.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

HEAVY_AT_ONCE: Final = 2
"""Expensive computations allowed at the same time (the machine has two cores)."""
WAIT_SECONDS: Final = 15.0
"""How long a visitor's request waits for a free slot before it is told the server is busy."""
WAIT_STEP_SECONDS: Final = 0.25
"""How often a waiting request looks for a free slot (and may update what it shows)."""

SLOTS: Final = threading.BoundedSemaphore(HEAVY_AT_ONCE)


def _nothing(seconds_left: float) -> None:
    """A waiter that shows nothing while it waits."""


def take_slot(wait: float, while_waiting: Callable[[float], None] = _nothing) -> bool:
    """Take a slot within `wait` seconds if one comes free (True), calling `while_waiting`
    with the seconds left before each short wait; False when none came free in time or the
    server is shutting down."""
    if SLOTS.acquire(blocking=False):
        return True
    ends = time.monotonic() + wait
    while threading.main_thread().is_alive():
        left = ends - time.monotonic()
        if left <= 0:
            return False
        while_waiting(left)
        if SLOTS.acquire(timeout=min(WAIT_STEP_SECONDS, left)):
            return True
    return False


@contextmanager
def held_slot(wait: float, while_waiting: Callable[[float], None] = _nothing) -> Iterator[bool]:
    """Yield whether a slot was taken within `wait` seconds; a slot taken is always given back."""
    taken = False
    try:
        taken = take_slot(wait, while_waiting)
        yield taken
    finally:
        if taken:
            SLOTS.release()
