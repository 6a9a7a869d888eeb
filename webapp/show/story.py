"""Summaries of a run read off the model, for the pages' introductions."""

from __future__ import annotations

from model.formats.trace import Trace
from webapp.show.events import reception_outcome
from webapp.show.style import ACCEPTED, HOLDS_GLYPH, REJECTED, VIOLATED_GLYPH, VIOLATING


def run_summary(trace: Trace) -> str:
    """One line: the design, how many writes were accepted/rejected, which properties broke."""
    outcomes = [reception_outcome(trace, step) for step in trace.steps]
    accepted = sum(1 for o in outcomes if o in (ACCEPTED, VIOLATING))
    rejected = sum(1 for o in outcomes if o == REJECTED)
    broken = trace.violated()
    verdict = (
        f"{VIOLATED_GLYPH} violates {', '.join(broken)}"
        if broken
        else f"{HOLDS_GLYPH} no property violated in this run"
    )
    writes = "write" if accepted == 1 else "writes"
    return f"{accepted} {writes} accepted, {rejected} rejected; {verdict}."
