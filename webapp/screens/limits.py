"""Limits that keep one server responsive for a whole class.

Expensive work (an exploration that is not cached yet, a proof) runs under a process-wide
limit on how many run at once. A visitor past the limit waits a little, then gets a clear
"busy" message instead of a page that hangs, and can try again. Waiting is done in short
steps with a note on the page: each update of the note is where Streamlit stops a script
whose visitor has left or rerun the page, so nobody waits for a slot on behalf of a visitor
who is gone, and a slot once taken is always given back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from webapp.content.busy import busy_sentence, waiting_sentence
from webapp.jobs.slots import HEAVY_AT_ONCE, WAIT_SECONDS, held_slot

__all__ = ["HEAVY_AT_ONCE", "WAIT_SECONDS", "heavy_work"]


@contextmanager
def heavy_work(what: str, wait: float = WAIT_SECONDS) -> Iterator[bool]:
    """Run the body when a slot is free (yields True); otherwise say the server is busy.

    Only a request that has to wait puts a note on the page; each update of the note is
    where Streamlit stops the script of a visitor who left, and the slot is given back."""
    notes: list[Any] = []

    def show_waiting(seconds_left: float) -> None:
        if not notes:
            notes.append(st.empty())
        notes[0].caption(waiting_sentence(seconds_left))

    with held_slot(wait, show_waiting) as admitted:
        if notes:
            notes[0].empty()
        if not admitted:
            st.warning(busy_sentence(what))
        yield admitted
