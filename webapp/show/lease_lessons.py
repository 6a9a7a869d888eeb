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
from model.properties import BY_NAME
from model.verdicts import Status
from webapp.show.style import HOLDS_GLYPH, STATUS_GLYPHS, VIOLATED_GLYPH

LEASE_CHAPTER: Final = 0
PAUSE_PROPERTIES: Final = ("P1", "P2", "P3")
"""What a paused holder's late write can break: order of tokens, the lease, grant order."""
CRASH_PROPERTY: Final = "P6"
PAUSE_COLUMN: Final = "a holder pauses, then wakes and writes (P1, P2, P3)"
CRASH_COLUMN: Final = "a holder crashes (P6)"
GROUP_ORDER: Final = (Status.HOLDS, Status.VIOLATED, Status.VACUOUS, Status.UNKNOWN)
"""The order of a cell's groups: what holds, what fails, then what was never tested or not
settled (a vacuous property is never listed among those that hold)."""
GROUP_VERBS: Final = {
    Status.HOLDS: ("holds", "hold"),
    Status.VACUOUS: ("holds vacuously", "hold vacuously"),
    Status.UNKNOWN: ("unknown (not finished)", "unknown (not finished)"),
}


def _listed(names: Sequence[str], one: str, several: str) -> str:
    """`P1, P3 hold` or `P2 holds`: names with the verb agreeing with how many they are."""
    return f"{', '.join(names)} {one if len(names) == 1 else several}"


def verdict_group(exploration: Exploration, names: Sequence[str]) -> str:
    """`✔ P1, P3 hold · ✘ P2 fails (5 steps)`: the properties that hold, those that fail, and
    apart those never exercised (`○ P5 holds vacuously`) or not settled (`? P4 unknown`)."""
    by_status = {
        status: [n for n in names if exploration.status(n) is status] for status in GROUP_ORDER
    }
    parts = []
    for status, names_here in by_status.items():
        if not names_here:
            continue
        glyph = STATUS_GLYPHS[status]
        if status is Status.VIOLATED:
            lengths = ", ".join(str(exploration.verdicts[n].shortest) for n in names_here)
            parts.append(f"{glyph} {_listed(names_here, 'fails', 'fail')} ({lengths} steps)")
        else:
            one, several = GROUP_VERBS[status]
            parts.append(f"{glyph} {_listed(names_here, one, several)}")
    return " · ".join(parts)


def crash_cell(exploration: Exploration) -> str:
    """What becomes of a crashed holder's lock, from P6's verdict (never exercised when
    nothing in the design crashes, not settled when the search stopped)."""
    verdict = exploration.verdicts[CRASH_PROPERTY]
    if verdict.violated:
        return (
            f"{VIOLATED_GLYPH} the crashed holder keeps the lock: P6 fails "
            f"({verdict.shortest} steps)"
        )
    if verdict.status is Status.HOLDS:
        return f"{HOLDS_GLYPH} the lock is freed within one lease: P6 holds"
    if verdict.status is Status.VACUOUS:
        why = BY_NAME[CRASH_PROPERTY].vacuity(exploration.design)
        return f"{STATUS_GLYPHS[Status.VACUOUS]} P6 holds vacuously, never exercised: {why}"
    return f"{STATUS_GLYPHS[verdict.status]} P6 {verdict.status.word}"


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
