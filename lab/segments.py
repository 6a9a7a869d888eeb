"""Conformance of a whole run: a history larger than the model's bounds, cut into segments.

The model checks at most 8 grants and 30 ticks in one run, and a randomized run has many
more. A history is cut where nothing of the past can matter to the model any more, and
each piece is replayed from the model's initial state. A cut before an event is allowed
when, at that point:

- no lease is live (every grant so far was revoked by etcd or released);
- no worker still holds a grant in the model's sense (it released, or the store rejected
  its request), unless it takes no step of the model ever again (it retired or crashed);
- no request is in flight (the store decided every one sent so far; a write of unknown
  outcome is placed before the cut by its landing point, or forbids the cut);
- every token granted from there on is at least the highest token accepted before it, so
  a fresh mark (0) and the real one decide every later write alike, and no later write
  can be lower than an earlier one across the cut (true of create revisions; lease IDs
  of several members are not ordered, which can leave fewer cuts).

Segments are as long as the bounds allow: from a start, the longest prefix the bounds
take is mapped, and the segment ends at the last cut inside it. A piece with no cut
inside the bounds is checked as far as they go, and checking resumes at the next cut; the
events skipped that way are not covered, and the coverage says how much was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from lab.history import Happening, Timeline

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


def sub_timeline(line: Timeline, start: int, stop: int) -> Timeline:
    """The events from `start` to `stop` as a timeline of their own (indices kept)."""
    return Timeline(line.history, line.events[start:stop])


def _decisions(events: Sequence[Happening]) -> dict[str, int]:
    """The index of the store's final decision on each request (the apply, for a
    check that passed)."""
    found: dict[str, int] = {}
    for e in events:
        if e.kind in ("deliver", "apply") or (e.kind == "check" and not e.get("passed")):
            found[str(e.get("request"))] = e.index
    return found


def cut_points(line: Timeline, landing: dict[str, int]) -> list[int]:
    """Every index before which a segment may start (see the module docstring); 0 first.

    `landing` gives, for each write of unknown outcome (by request), the index before
    which the model would receive it if it was applied (-1: the end of the history)."""
    events = line.events
    decided = _decisions(events)
    last_step: dict[int, int] = {}
    for e in events:
        if e.kind in MODEL_KINDS:
            last_step[e.worker] = e.index
    later_min = [0] * (len(events) + 1)
    lowest: int | None = None
    for position in range(len(events) - 1, -1, -1):
        e = events[position]
        if e.kind == "grant":
            token = int(e.get("token"))
            lowest = token if lowest is None else min(lowest, token)
        later_min[position] = -1 if lowest is None else lowest
    later_min[len(events)] = -1
    cuts = [0]
    live: set[int] = set()
    holding: set[int] = set()
    flying: dict[str, Happening] = {}
    highest = 0
    for position, e in enumerate(events):
        ordered = later_min[position] < 0 or later_min[position] >= highest
        quiet = _quiet(position, live, holding, flying, last_step, landing, decided)
        if position and ordered and quiet:
            cuts.append(position)
        _walk(e, live, holding, flying)
        if e.is_write_accepted:
            highest = max(highest, int(e.get("token")))
    return cuts


def _walk(e: Happening, live: set[int], holding: set[int], flying: dict[str, Happening]) -> None:
    """Follow one event: leases, the workers' grants, the requests in flight."""
    if e.kind == "grant":
        live.add(int(e.get("revision")))
        holding.add(e.worker)
    elif e.kind == "revoked" or (e.kind == "release" and e.get("deleted")):
        live.discard(int(e.get("grant")))
    if e.kind == "release":
        holding.discard(e.worker)
    elif e.kind == "send":
        flying[str(e.get("request"))] = e
    elif e.kind == "fail" and e.get("request") is not None:
        flying.pop(str(e.get("request")), None)  # it never reached the store
    elif e.kind in ("deliver", "apply") or (e.kind == "check" and not e.get("passed")):
        flying.pop(str(e.get("request")), None)
        if e.get("outcome") == "rejected" or e.kind == "check":
            holding.discard(e.worker)


def _quiet(
    position: int,
    live: set[int],
    holding: set[int],
    flying: dict[str, Happening],
    last_step: dict[int, int],
    landing: dict[str, int],
    decided: dict[str, int],
) -> bool:
    """Whether nothing before `position` can matter to the model after it."""
    if live:
        return False
    if any(last_step.get(w, -1) >= position for w in holding):
        return False
    for request in flying:
        if request in decided:
            return False  # decided later: in flight across the cut
        lands = landing.get(request)
        if lands is None or lands < 0 or lands >= position:
            return False
    return True


def plan_segments(
    line: Timeline, fits: Any, landing: dict[str, int]
) -> list[tuple[int, int, bool]]:
    """The segments to replay: (start, stop, whole) with `whole` False for a piece checked
    only as far as the bounds go. `fits(start, stop)` is how many events from `start` the
    model's bounds take of the piece ending before `stop`."""
    cuts = cut_points(line, landing)
    total = len(line.events)
    plan: list[tuple[int, int, bool]] = []
    start: int | None = 0
    while start is not None and start < total:
        taken = fits(start, total)
        if start + taken >= total:
            plan.append((start, total, True))
            break
        inside = [c for c in cuts if start < c <= start + taken]
        if inside:
            plan.append((start, inside[-1], True))
            start = inside[-1]
            continue
        plan.append((start, start + taken, False))
        start = next((c for c in cuts if c > start + taken), None)
    return plan
