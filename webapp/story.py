"""Summaries of a run read off the model, for the pages' introductions."""

from __future__ import annotations

from collections.abc import Sequence

from model.trace import Trace
from webapp.events import reception_outcome
from webapp.style import ACCEPTED, HOLDS_GLYPH, REJECTED, VIOLATED_GLYPH, VIOLATING


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
    return (
        f"**{trace.title or trace.design.label()}** (receiver `{trace.design.receiver}`): "
        f"{accepted} write(s) accepted, {rejected} rejected; {verdict}."
    )


def story_verdicts(traces: Sequence[Trace]) -> list[str]:
    """A bullet per run."""
    return [f"- {run_summary(trace)}" for trace in traces]
