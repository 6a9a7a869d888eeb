"""What a visitor reads while the model explores, searches at random or replays runs."""

from __future__ import annotations

from typing import Final

from fencing.strategies import HYPOTHESIS, RANDOM
from model.check.explorer import Progress

EXPLORING: Final = "Exploring every interleaving…"
"""The progress bar's words before the first breadth-first level is done."""
REPLAYING_CHAPTER: Final = "Replaying the chapter's runs…"
"""The spinner's words while a walkthrough chapter's runs are rebuilt."""


def exploring(progress: Progress) -> str:
    """What the progress bar says after a breadth-first level: depth, states, transitions, time."""
    return (
        f"Exploring: depth {progress.depth}, {progress.states:,} states, "
        f"{progress.transitions:,} transitions, {progress.seconds:.1f} s"
    )


def searching_at_random(runs: int, strategy: str = RANDOM) -> str:
    """The spinner's words while a random (or Hypothesis) search tries up to `runs` runs
    per property."""
    who = "with Hypothesis" if strategy == HYPOTHESIS else "at random"
    return f"Searching {who}: up to {runs:,} runs per property…"
