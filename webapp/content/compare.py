"""The Compare page's words: the verdict matrix's title and how to read it, and what changes
going from design A to design B."""

from __future__ import annotations

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
        "violating run has 8 steps; ✔ holds; ○ holds only because nothing it checks ever "
        "happens. Click a violated cell, or choose it below, to open its counterexample."
    )


def counterexample_title(preset: str, prop: str) -> str:
    """The title of a cell's counterexample run."""
    return f"{preset}: shortest {prop} counterexample"


def custom_lesson(design: Design) -> str:
    """What stands for a lesson under a design that is no preset: the design in words."""
    return f"{YOUR_DESIGN} ({design.in_words()})"


def difference_lines(diff: Difference) -> str:
    """What disappears, appears and remains from A to B, and the reachable states, as a list."""
    lines = [
        f"- **Disappear** going from A to B: {', '.join(diff.disappear) or 'none'}",
        f"- **Appear**: {', '.join(diff.appear) or 'none'}",
        f"- **Remain**: {', '.join(diff.remain) or 'none'}",
        f"- **Reachable states**: {diff.state_change}",
    ]
    return "\n".join(lines)


def incomplete_warning(diff: Difference) -> str | None:
    """The warning when an exploration of A or B hit its budget (None when both finished)."""
    return None if diff.complete else "Incomplete: at least one exploration hit its budget."
