"""The walkthrough chapters' words around their runs: where a run's actions come from, what
the link did not say right, the verdict table's title and how to read it, and chapter 0's
takeaway table."""

from __future__ import annotations

from typing import Final

from model.design import Bounds
from model.formats.trace import Trace
from webapp.show.chapters import RunSpec

NO_SUCH_RUN: Final = "it names no run of this chapter"
"""What is wrong with a link whose run is not one of the chapter's."""
VERDICTS_TITLE: Final = "What the explorer says about each design"
LESSON_TABLE_TITLE: Final = "The table to take away"


def source_line(spec: RunSpec, trace: Trace) -> str:
    """Where a run's actions come from, in words, and what they violate when replayed on
    another design than the one the explorer found them for."""
    bounds = spec.bounds.in_words()
    if spec.counterexample_of is None:
        return f"Scripted actions, replayed through the model at {bounds}."
    preset, prop = spec.counterexample_of
    found = f"the explorer's shortest counterexample to {prop} for the {preset} design"
    if not spec.replays_another_design and not spec.in_one_step:
        return f"{found[0].upper()}{found[1:]}, at {bounds}."
    how = ", each request checked and stored in one step," if spec.in_one_step else ""
    broken = trace.violated()
    here = f"here they violate {', '.join(broken)}" if broken else "here they violate nothing"
    return f"The actions of {found}{how} replayed on this design at {bounds}: {here}."


def verdicts_caption(bounds: Bounds) -> str:
    """How to read the verdict table: its bounds, and what the number after a violation is."""
    return (
        f"Every interleaving at {bounds.in_words()}; the number after a violation is the "
        "length of the shortest violating run."
    )


def lesson_table_caption(bounds: Bounds) -> str:
    """Where chapter 0's takeaway table comes from: the explorer's verdicts at these bounds."""
    return (
        f"Read off the explorer's verdicts on every interleaving at "
        f"{bounds.in_words()}; the numbers are the lengths of the shortest "
        "violating runs."
    )


def next_label(title: str) -> str:
    """The link at the end of a chapter to the page that comes next."""
    return f"Next: {title}"
