"""Chapter 0's takeaway rows: what a pause and what a crash do to each design, in words.

Every cell is read off the explorer's verdicts on the chapter's presets (P1, P2, P3 for a
holder that pauses and wakes, P6 for one that crashes), so the table a student leaves with
says exactly what the model found, at the bounds it names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from model.check.explorer import Exploration
from model.presets import PRESETS
from webapp.show.style import HOLDS_GLYPH, VIOLATED_GLYPH

LEASE_CHAPTER: Final = 0
PAUSE_PROPERTIES: Final = ("P1", "P2", "P3")
"""What a paused holder's late write can break: order of tokens, the lease, grant order."""
CRASH_PROPERTY: Final = "P6"
PAUSE_COLUMN: Final = "a holder pauses, then wakes and writes (P1, P2, P3)"
CRASH_COLUMN: Final = "a holder crashes (P6)"


def verdict_group(exploration: Exploration, names: Sequence[str]) -> str:
    """`✔ P1, P3 hold · ✘ P2 fails (5 steps)`: the properties that hold, then those that fail."""
    holding = [n for n in names if not exploration.verdicts[n].violated]
    failing = [n for n in names if exploration.verdicts[n].violated]
    parts = []
    if holding:
        parts.append(f"{HOLDS_GLYPH} {', '.join(holding)} hold{'s' if len(holding) == 1 else ''}")
    if failing:
        lengths = ", ".join(str(exploration.verdicts[n].shortest) for n in failing)
        verb = "fails" if len(failing) == 1 else "fail"
        parts.append(f"{VIOLATED_GLYPH} {', '.join(failing)} {verb} ({lengths} steps)")
    return " · ".join(parts)


def crash_cell(exploration: Exploration) -> str:
    """What becomes of a crashed holder's lock, from P6's verdict."""
    verdict = exploration.verdicts[CRASH_PROPERTY]
    if verdict.violated:
        return (
            f"{VIOLATED_GLYPH} the crashed holder keeps the lock: P6 fails "
            f"({verdict.shortest} steps)"
        )
    return f"{HOLDS_GLYPH} the lock is freed within one lease: P6 holds"


def lesson_rows(explorations: Mapping[str, Exploration]) -> list[dict[str, str]]:
    """One row per design: what it mirrors, then what a pause and what a crash do to it."""
    return [
        {
            "design": f"{name}: {PRESETS[name].mirrors}",
            PAUSE_COLUMN: verdict_group(exploration, PAUSE_PROPERTIES),
            CRASH_COLUMN: crash_cell(exploration),
        }
        for name, exploration in explorations.items()
    ]
