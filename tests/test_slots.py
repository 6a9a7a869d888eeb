"""The heavy-work slots as plain code: taken, waited for, refused in time, always given back."""

from __future__ import annotations

import threading

import pytest

from tests.slots import free_slots
from webapp.jobs import slots


def test_a_free_slot_is_taken_at_once_and_given_back() -> None:
    waits: list[float] = []
    with slots.held_slot(1.0, waits.append) as admitted:
        assert admitted
        assert free_slots() == slots.HEAVY_AT_ONCE - 1
    assert waits == []
    assert free_slots() == slots.HEAVY_AT_ONCE


def test_a_request_waits_then_is_refused_when_no_slot_comesfree_slots() -> None:
    for _ in range(slots.HEAVY_AT_ONCE):
        assert slots.SLOTS.acquire(timeout=30)
    try:
        waits: list[float] = []
        with slots.held_slot(0.6, waits.append) as admitted:
            assert not admitted
        assert len(waits) >= 2
        assert waits == sorted(waits, reverse=True)
        assert all(0 < left <= 0.6 for left in waits)
    finally:
        for _ in range(slots.HEAVY_AT_ONCE):
            slots.SLOTS.release()
    assert free_slots() == slots.HEAVY_AT_ONCE


def test_a_slot_freed_while_waiting_is_taken_and_given_back_after_a_failure() -> None:
    for _ in range(slots.HEAVY_AT_ONCE):
        assert slots.SLOTS.acquire(timeout=30)
    timer = threading.Timer(0.3, slots.SLOTS.release)
    timer.start()
    try:
        with pytest.raises(RuntimeError), slots.held_slot(30.0) as admitted:
            assert admitted
            raise RuntimeError("the work failed")
    finally:
        timer.join()
        for _ in range(slots.HEAVY_AT_ONCE - 1):
            slots.SLOTS.release()
    assert free_slots() == slots.HEAVY_AT_ONCE
