"""The step player's words: its Play button, its position, its headings and its link problem."""

from __future__ import annotations

from typing import Final

from webapp.content.common import link_not_understood

PLAY_HELP: Final = "Step through the run, one step a second; from the start again at the end."
"""The Play button's help."""
NO_STEPS: Final = "_The run has no steps._"
"""The narration of a run without a step."""
WHAT_HAPPENS: Final = "**What happens, step by step**"
"""The heading of a run's narration."""
STEP_IT_YOURSELF: Final = "Step it yourself in the scheduler"
"""The link that opens a run in Be the scheduler, at the step shown."""
STEP_IT_YOURSELF_HELP: Final = (
    "Opens this run in Be the scheduler at this step: step it back and forth, or take "
    "another action from any step and see what changes."
)


def step_out_of_range(count: int) -> str:
    """What is wrong with a step in the link that is not a position of a run of `count` steps."""
    return f"the step must be a whole number from 0 to {count}"


def bad_step_link(problem: str, position: int) -> str:
    """The link's step was not understood: what was wrong, and the step shown instead."""
    return link_not_understood(f"{problem}; showing step {position}")


def step_of(position: int, count: int) -> str:
    """The player's position among the run's steps."""
    return f"**Step {position} of {count}**"


def state_after(step: int) -> str:
    """The heading of the state table after `step` steps."""
    return f"**State after step {step}**"
