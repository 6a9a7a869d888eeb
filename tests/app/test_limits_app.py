"""AppTest: the heavy-work limit. Past it a page waits briefly and then says the server is
busy; a slot is always given back, also when the work inside it fails."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from tests.slots import free_slots
from webapp.content.busy import busy_sentence
from webapp.jobs import slots


def _page() -> None:
    """A page that does heavy work under the limit, waiting half a second (or `wait`)."""
    import streamlit as st

    from webapp.screens.limits import heavy_work

    with heavy_work("the count", wait=float(st.query_params.get("wait", "0.5"))) as admitted:
        if admitted:
            if st.query_params.get("fail") == "1":
                raise RuntimeError("the work failed")
            st.markdown("counted")


@pytest.fixture
def all_slots_taken() -> Iterator[None]:
    """Every slot held by others for the test's duration."""
    for _ in range(slots.HEAVY_AT_ONCE):
        assert slots.SLOTS.acquire(timeout=30)
    try:
        yield
    finally:
        for _ in range(slots.HEAVY_AT_ONCE):
            slots.SLOTS.release()


def test_with_a_free_slot_the_work_runs_and_gives_the_slot_back() -> None:
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert [m.value for m in at.markdown] == ["counted"] and not at.warning
    assert free_slots() == slots.HEAVY_AT_ONCE


def test_past_the_limit_the_visitor_is_told_the_server_is_busy(all_slots_taken: None) -> None:
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert [w.value for w in at.warning] == [busy_sentence("the count")]
    assert not at.markdown  # the work did not run
    assert free_slots() == 0  # nobody else's slot was taken or given away


def test_a_visitor_who_waits_gets_the_slot_freed_meanwhile() -> None:
    """Both slots taken; one comes free while the page waits: the work runs."""
    for _ in range(slots.HEAVY_AT_ONCE):
        assert slots.SLOTS.acquire(timeout=30)
    timer = threading.Timer(1.0, slots.SLOTS.release)
    timer.start()
    try:
        at = AppTest.from_function(_page, default_timeout=30)
        at.query_params["wait"] = "20"
        at.run()
    finally:
        timer.join()
        for _ in range(slots.HEAVY_AT_ONCE - 1):
            slots.SLOTS.release()
    assert [m.value for m in at.markdown] == ["counted"] and not at.warning
    assert free_slots() == slots.HEAVY_AT_ONCE


def test_a_slot_is_given_back_when_the_work_fails() -> None:
    at = AppTest.from_function(_page, default_timeout=30)
    at.query_params["fail"] = "1"
    at.run()
    assert at.exception  # the app's own error box (its details are not shown to visitors)
    assert free_slots() == slots.HEAVY_AT_ONCE
