"""The Proofs page's words: what z3's three ways of checking are, its progress while it
proves, and the headings of the precise evidence under each verdict."""

from __future__ import annotations

from typing import Final

TITLE: Final = "Proofs"

INTRO: Final = (
    "z3 checks the same rules the explorer runs, in three ways. **Induction** finds a "
    "fact that is true at the start and that no step can break, and shows the property "
    "follows from it: a proof for every length of run, not just within the bounds. "
    "**Bounded model checking** searches every run up to a length for the shortest one "
    "that breaks the property. **Spacer** searches for such a fact by itself when the "
    "ready-made ones are not enough. What none of them settles within the time budget "
    "is reported as unknown."
)

PROVING: Final = "z3 is proving…"
"""The progress bar's text before the first second has passed."""
RUN_SWITCH: Final = "Run the prover"
SWITCH_ON: Final = "Switch on to run z3 for this design and these bounds."
"""What the page says while the prover is switched off."""
PRECISE_FORM: Final = "The precise form (invariant, z3's reasons)"
"""The title of the expander with the evidence behind a verdict."""
INVARIANT_LEAD: Final = "Every reachable state keeps this invariant:"
"""The words above the invariant z3 proved."""
CTI_LEAD: Final = (
    "A state that keeps what z3 knows but breaks the property in one step "
    "(it may not be reachable):"
)
"""The words above a counterexample to induction."""


def proving_progress(seconds: float, budget: float) -> str:
    """The progress bar's text: the seconds z3 has spent, and its time budget."""
    return f"z3 is proving… {seconds:.0f} s (its budget is {budget:g} s)"


def lesson_line(preset: str, caption: str) -> str:
    """The lesson of the preset the chosen design is, under the verdict table."""
    return f"Lesson of {preset}: {caption}"


def violation_title(prop: str) -> str:
    """The title of the run z3 found to violate a property."""
    return f"z3's shortest {prop} violation"


def run_not_replayed(problem: str) -> str:
    """What the page says when z3's run does not replay in the model (the model's reason)."""
    return f"z3's run does not replay in the model: {problem}"
