"""Conformance of a whole run: how much of a history the model's replay covered.

The model checks at most 8 grants and 30 ticks in one run, and a randomized run has many
more, so a long history is replayed in segments (lab.conformance): each is as long as the
bounds allow, and each starts from the state the model reached at the end of the one
before, renamed to fit (lab.rebuild), never from a fresh model, so a stale holder, a
request in flight, the mark and the last accepted token all cross the cut. Every event is
in one segment; the coverage says how much of the run (events, grants and write decisions)
the replay checked, 100% unless a point came where the run could not be cut (a crashed
holder's lock the model had not yet flagged) beyond the bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from lab.history import Timeline

MODEL_KINDS: Final = ("grant", "send", "deliver", "check", "apply", "release")
"""Events that are steps of a worker (or the store's steps on its requests) in the model."""


@dataclass(frozen=True)
class Coverage:
    """How much of a history the model checked: events, grants and write decisions."""

    events: tuple[int, int]
    grants: tuple[int, int]
    writes: tuple[int, int]
    """Covered and total."""
    segments: int

    @property
    def fraction(self) -> float:
        """Grants and writes covered over their total (1.0 for a history with neither)."""
        covered = self.grants[0] + self.writes[0]
        total = self.grants[1] + self.writes[1]
        return covered / total if total else 1.0

    def sentence(self) -> str:
        """`covered 12 of 12 grants and 30 of 30 writes (100%), in 3 segments`."""
        pieces = "one segment" if self.segments == 1 else f"{self.segments} segments"
        return (
            f"covered {self.grants[0]} of {self.grants[1]} grants and {self.writes[0]} of "
            f"{self.writes[1]} writes ({self.fraction:.0%}), {self.events[0]:,} of "
            f"{self.events[1]:,} events, in {pieces}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "events": {"covered": self.events[0], "total": self.events[1]},
            "grants": {"covered": self.grants[0], "total": self.grants[1]},
            "writes": {"covered": self.writes[0], "total": self.writes[1]},
            "fraction": round(self.fraction, 4),
            "segments": self.segments,
        }


def coverage_of(line: Timeline, ranges: Sequence[tuple[int, int]]) -> Coverage:
    """The coverage of the events in these [start, stop) ranges of the timeline."""
    inside = [e for start, stop in ranges for e in line.events[start:stop]]
    events = line.events
    return Coverage(
        (len(inside), len(events)),
        (sum(e.kind == "grant" for e in inside), sum(e.kind == "grant" for e in events)),
        (
            sum(e.is_write_decision for e in inside),
            sum(e.is_write_decision for e in events),
        ),
        len(ranges),
    )
