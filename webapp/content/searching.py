"""What a visitor reads while the model explores, searches at random or replays runs."""

from __future__ import annotations

from typing import Final

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


def searching_at_random(runs: int) -> str:
    """The spinner's words while a random search tries up to `runs` runs per property."""
    return f"Searching at random: up to {runs:,} runs per property…"
