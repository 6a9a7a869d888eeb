"""The Be the scheduler page's words: what the student does, the moves, and what a file or
a link did."""

from __future__ import annotations

from typing import Final

from model.design import Bounds
from webapp.show.text import counted

INTRO: Final = (
    "You decide what happens next: let time pass, grant the lock, send or deliver a "
    "write. Pauses are not a button: a worker you do not move while the clock ticks is "
    "paused. The model checks every property after each step."
)
"""The page's first paragraph: the student is the scheduler."""
DESIGN_FORM: Final = "Design and bounds"
"""The title of the folded-away design form (the caption above the board names it too)."""
FRESH_RUN: Final = "Start a fresh run"
"""The button that forgets a bad link and starts the default design."""
START_DESIGN: Final = "Start a new run with this design"
"""The design form's button."""
FINISH_LABEL: Final = "Finish with the shortest violation of"
"""The (hidden) label of the property chooser beside the Finish button."""
FINISH: Final = "Finish with the shortest violation from here"
"""The button that appends the shortest violating continuation."""
FINISH_WORK: Final = "the search for the shortest violation"
"""What the busy sentence names when the search for a violation cannot start."""
PROPERTIES_HERE: Final = "**Properties at this state**"
"""The heading of each property's status."""
SHARE: Final = "**Share or keep this run**"
"""The heading of the run's link and downloads."""
DOWNLOAD_JSON: Final = "Download the trace (JSON)"
DOWNLOAD_ITF: Final = "Download the trace (ITF)"


def searching_violation(prop: str) -> str:
    """The spinner's words while the shortest violation of `prop` is searched for."""
    return f"Searching for the shortest violation of {prop} from here…"


def file_too_large(size: int, limit: int) -> str:
    """A trace file of `size` bytes is over the `limit`."""
    return f"The trace file is {size:,} bytes; the limit is {limit:,} bytes."


def file_not_loaded(problem: str) -> str:
    """The trace file was refused, for `problem`."""
    return f"This trace file was not loaded: {problem}"


def loaded(steps: int) -> str:
    """A trace file was loaded as the run: how many steps it has."""
    return f"Loaded a run of {counted(steps, 'step')}."


def design_not_started(problem: str) -> str:
    """The design form's design or bounds were refused, for `problem`."""
    return f"That design was not started: {problem}"


def upload_label(limit: int) -> str:
    """The trace file uploader's label: the formats it reads and the largest file."""
    return f"Load a trace file (JSON or ITF, at most {limit:,} bytes)"


def your_move(step: int) -> str:
    """The heading of the moves: which step the student chooses."""
    return f"**Your move** (step {step}):"


def design_caption(name: str, bounds: Bounds) -> str:
    """The run's design (`name`, already escaped) and bounds, and where to change them."""
    return f"Design: {name}; {bounds.in_words()}. Change it under *{DESIGN_FORM}*."


def standing_at(at: int, count: int) -> str:
    """Where the board stands in the run."""
    return f"Step {at} of {count}"


def replaces_later(later: int) -> str:
    """What a move does when the board stands before the run's end."""
    return (
        f"You stand before the run's end: a move here replaces the {counted(later, 'step')} "
        "after this one."
    )
