"""Test helper: every heavy-work slot of the web app taken, as by other visitors' work."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from webapp.jobs import slots
from webapp.screens import limits

SHORT_WAIT = 0.2
"""How long a request waits for a slot in these tests before it is told the server is busy."""


@contextmanager
def all_slots_taken(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Hold every heavy-work slot (and shorten the wait) until the block ends."""
    monkeypatch.setattr(limits, "WAIT_SECONDS", SHORT_WAIT)
    taken = 0
    try:
        for _ in range(slots.HEAVY_AT_ONCE):
            assert slots.SLOTS.acquire(timeout=60), "a heavy-work slot stayed busy"
            taken += 1
        yield
    finally:
        for _ in range(taken):
            slots.SLOTS.release()


def free_slots() -> int:
    """How many heavy-work slots are free now (each taken and given straight back to count it)."""
    taken = 0
    while slots.SLOTS.acquire(blocking=False):
        taken += 1
    for _ in range(taken):
        slots.SLOTS.release()
    return taken
