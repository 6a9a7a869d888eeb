"""The Check-my-stack page's words: the choices of parts, the verdicts and fixes said from the
advisor's own results, and the downloads."""

from __future__ import annotations

from typing import Final

from advise.advice import Advice
from advise.words import all_hold as advice_all_hold
from model.design import Bounds
from model.formats.trace import Trace
from model.verdicts import Status, vacuity_sentence

TITLE: Final = "Check my stack"

INTRO: Final = (
    "Pick the parts your system really uses. The model checks every interleaving of "
    "two workers with those parts, a holder that may crash included (as in every real "
    "system), tells each bug in your stack's words, and lists the changes that fix it: "
    "complete fixes in the parts you already run first."
)

EXAMPLE_CHOICE: Final = "Start from a stack people run"
EXAMPLE_HINT: Final = "or pick your parts below"
TOKEN_CHOICE: Final = "The token your lock service hands out"
RESOURCE_CHOICE: Final = "How the resource writes"
PRACTICES_CHOICE: Final = "What else your stack does"
CHECKING_WORK: Final = "the check of your stack"
YOUR_STACK: Final = "your stack"
"""The heading of the verdict column of the stack's table (a row per property)."""
"""The work a stack's check waits for, as the busy message names it."""
CHECKING: Final = "Checking your stack and the designs next to it…"
WHAT_TO_CHANGE: Final = "What to change"
HIDING_TITLE: Final = "Changes that hide the bug (not fixes)"
SAME_CHECK: Final = "The same check on the command line"
REVIEW_NOTE: Final = "Download a design-review note (Markdown)"
CATALOGUE_TITLE: Final = "The catalogue: each real part and what it means in the model"


def stack_refused(problem: str) -> str:
    """Why a link's stack cannot be built (the model's reason)."""
    return f"the link's stack is refused: {problem}"


def link_part_not_understood(problem: str) -> str:
    """The warning over a page opened on the default stack because the link's was refused."""
    return f"Part of the link was not understood: {problem}"


def checked_at(bounds: Bounds) -> str:
    """The bounds the stack was checked at, in words and in short."""
    return f"Checked at {bounds.in_words()} ({bounds.short()})."


def all_hold(advice: Advice) -> str | None:
    """The good news when the stack violates no property in a finished exploration (None when
    it violates one, or when the exploration stopped at its budget: then nothing is known)."""
    return advice_all_hold(advice)


def untested(advice: Advice) -> list[str]:
    """For each property the stack never puts to the test, why (the design's own reason)."""
    return [
        vacuity_sentence(name, advice.design) + "."
        for name, verdict in advice.exploration.verdicts.items()
        if verdict.status is Status.VACUOUS
    ]


def steps_cannot_happen(prop: str) -> str:
    """Why a fix shows no run: the counterexample's steps do not all exist under it."""
    return (
        f"The steps of {prop}'s run cannot all happen under this change: it "
        "changes what the workers do."
    )


def fixed_run_outcome(prop: str, run: Trace) -> str:
    """Whether the counterexample's steps, replayed under a fix, still violate the property."""
    outcome = "still violates" if prop in run.violated() else "no longer violates"
    return f"The same steps under this change {outcome} {prop}."
