"""Trace files a visitor uploads: measured before they are decoded, replayed under the
heavy-work limit.

Every upload is read by `model.formats.reading` (size, nesting, values and numbers counted from
the text, then the states and records of an ITF trace counted before itf-py sees it), so a
hostile file is refused in a fraction of a second and costs memory in proportion to its
size only. The parse and the replay run in one of the server's heavy-work slots, as an
exploration does, so uploads at once cannot take every core. Nothing of a refused file is
kept: no cache holds a parse, and the refusal is one sentence.
"""

from __future__ import annotations

from collections.abc import Callable

from model.formats.trace import Trace
from webapp.content import common
from webapp.screens.limits import heavy_work


def read_trace_upload(data: bytes, reader: Callable[[bytes], Trace]) -> Trace | None:
    """The uploaded trace read and replayed by `reader` (`trace_from_json`, or
    `trace_from_any_json` for ITF too), or None when the server was busy (the busy message
    is shown). A bad file raises the reader's TraceError."""
    with heavy_work(common.READING_TRACE_FILE) as admitted:
        if not admitted:
            return None
        return reader(data)
