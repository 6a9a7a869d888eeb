"""The Compare page's words: the verdict matrix's title and how to read it, and what changes
going from design A to design B."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from model.design import Bounds, Design
from webapp.show.verdicts import Difference

TITLE: Final = "Compare designs"
NO_CELL: Final = "(choose a violated cell)"
"""The cell menu's first entry: no counterexample is open."""
MATRIX_TITLE: Final = "Every preset against every property"
CELL_CHOOSER: Final = "Open the counterexample of a violated cell"
"""The label of the menu of violated cells."""
WITH_WITHOUT_TITLE: Final = "With versus without"
YOUR_DESIGN: Final = "your design"
"""What a side that is no preset is called."""
SAME_CHECKS: Final = "The same two checks on the command line:"


def matrix_caption(bounds: Bounds) -> str:
    """How to read the matrix: its bounds, the cell marks, and how to open a counterexample."""
    return (
        f"Every interleaving at {bounds.in_words()}. ✘ 8: violated, the shortest "
        "violating run has 8 steps; ✔ holds; ○ holds vacuously: never exercised, for the "
        "reason listed below the table. Click a violated cell, or choose it below, to open "
        "its counterexample."
    )


def counterexample_title(preset: str, prop: str) -> str:
    """The title of a cell's counterexample run."""
    return f"{preset}: shortest {prop} counterexample"


def custom_lesson(design: Design) -> str:
    """What stands for a lesson under a design that is no preset: the design in words."""
    return f"{YOUR_DESIGN} ({design.in_words()})"


def never_exercised_list(notes: Sequence[str]) -> str:
    """Why each ○ of a table was never exercised, as a Markdown list (empty: none)."""
    return "\n".join(f"- ○ {note}" for note in notes)


def _names(names: Sequence[str]) -> str:
    """Property names joined, or `none`."""
    return ", ".join(names) or "none"


def difference_lines(diff: Difference) -> str:
    """What disappears, appears and remains from A to B, what either never exercises, and
    the reachable states, as a list. A violation that disappears only because B never
    exercises the property is said to be untested, not fixed."""
    untested = diff.untested_not_fixed
    aside = (
        f" ({_names(untested)} only because B never exercises "
        f"{'it' if len(untested) == 1 else 'them'}: untested, not fixed)"
        if untested
        else ""
    )
    lines = [
        f"- **Disappear** going from A to B: {_names(diff.disappear)}{aside}",
        f"- **Appear**: {_names(diff.appear)}",
        f"- **Remain**: {_names(diff.remain)}",
        f"- **Never exercised** (hold vacuously): in A {_names(diff.vacuous_a)}; "
        f"in B {_names(diff.vacuous_b)}",
        f"- **Reachable states**: {diff.state_change}",
    ]
    return "\n".join(lines)


def incomplete_warning(diff: Difference) -> str | None:
    """The warning when an exploration of A or B hit its budget (None when both finished)."""
    return None if diff.complete else "Incomplete: at least one exploration hit its budget."
