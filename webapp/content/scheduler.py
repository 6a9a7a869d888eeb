"""The words of the scheduler's board, shared by the playground and the *break it* exercises."""

from __future__ import annotations

from typing import Final

RUN_ENDED: Final = "No action is enabled: this run has ended (a normal end, not an error)."
"""Shown instead of the action buttons when no action is enabled."""
STEP_BY_STEP: Final = "**What happened, step by step**"
"""The heading of the narration of the run so far."""


def takes_this_step(actor: str) -> str:
    """An action button's help: who takes the step."""
    return f"{actor} takes this step"


def state_after(steps: int) -> str:
    """The heading of the state table after the run's `steps` steps."""
    return f"**State of every actor after step {steps}**"
