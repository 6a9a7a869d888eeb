"""The facts of a swimlane timeline, whatever ran: lanes, bars, marks, requests and gaps on a
time axis, with the legend's looks.

A model run is turned into these facts by `webapp.show.trace_swimlane`, a lab history by
`webapp.show.lab_history`; `webapp.draw.swimlane` draws both. The facts say what happened
where and when, with its words (labels, hover sentences) and its look (`webapp.show.looks`);
the drawer alone decides the geometry: bar heights, where labels sit, arrowheads, sizes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from webapp.show.looks import (
    AREA_LOOKS,
    CRASHED,
    CURRENT,
    GAP,
    HELD,
    IN_NETWORK,
    LEASE,
    LOCK_HELD,
    MARK_LOOKS,
    PAST_LEASE,
    PAST_LOCK,
    PAUSED,
    Look,
)
from webapp.show.style import Outcome

LEASE_BAR: Final = "lease"
"""A bar kind: a lease while it is current."""
PAST_LEASE_BAR: Final = "past"
"""A bar kind: a holder still acting on its token after its lease ended."""
PAUSE_BAR: Final = "pause"
"""A bar kind: a process stopped (hatched)."""
HOLD_BAR: Final = "hold"
"""A bar kind: a request held in flight (hatched)."""
CRASH_BAR: Final = "crashed"
"""A bar kind: a crashed worker's lane from its crash on (a solid dark line)."""
LOCK_BAR: Final = "lock"
"""A bar kind: a lock without a lease while its holder has it (it never expires)."""
PAST_LOCK_BAR: Final = "lost"
"""A bar kind: a worker still acting on a lock without a lease it no longer holds."""

BAR_LOOKS: Final = {
    LEASE_BAR: LEASE,
    PAST_LEASE_BAR: PAST_LEASE,
    PAUSE_BAR: PAUSED,
    HOLD_BAR: HELD,
    CRASH_BAR: CRASHED,
    LOCK_BAR: LOCK_HELD,
    PAST_LOCK_BAR: PAST_LOCK,
}
"""The look of each bar kind (its legend entry)."""
LEASE_KINDS: Final = (LEASE_BAR, PAST_LEASE_BAR, LOCK_BAR, PAST_LOCK_BAR)
"""Bar kinds drawn in their lane's actor colour, filled, with their label inside."""
HATCHED_KINDS: Final = (PAUSE_BAR, HOLD_BAR)


@dataclass(frozen=True)
class Lane:
    """A row of the figure: its name (shown on the axis) and its height."""

    name: str
    y: float


@dataclass(frozen=True)
class Bar:
    """A span of time on a lane: a lease, a lease outlived, a pause, a held request, a crash;
    with the words written by it and said on hover (none for a bare bar)."""

    lane: str
    start: float
    end: float
    kind: str
    label: str = ""
    hover: str = ""


@dataclass(frozen=True)
class Mark:
    """One event at one time on one lane: its colour, hover sentence and short label."""

    lane: str
    x: float
    colour: str
    hover: str
    label: str = ""


@dataclass(frozen=True)
class MarkGroup:
    """The marks of one look (one legend entry)."""

    look: Look
    marks: tuple[Mark, ...]


@dataclass(frozen=True)
class Request:
    """A request from its sender's lane: in the network from `sent` to `end` (where it was
    decided, or now while still in flight), then, once decided, dropped to `to_lane`."""

    lane: str
    sent: float
    end: float
    to_lane: str
    outcome: Outcome | None
    is_read: bool
    hover: str
    in_flight: bool = False
    flight_label: str = ""
    """The words at the head of a request still in flight."""


@dataclass(frozen=True)
class Span:
    """A stretch of time across every lane (the gap), with its label and hover sentence."""

    start: float
    end: float
    label: str
    hover: str


@dataclass(frozen=True)
class TimeAxis:
    """The time axis: its range and title; given ticks (one band per tick, every other one
    shaded) or, when there are none, the plotting library's own ticks on a grid."""

    left: float
    right: float
    title: str
    ticks: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True)
class Swimlane:
    """Everything a swimlane figure shows, top lane first."""

    title: str
    subtitle: str
    lanes: tuple[Lane, ...]
    bars: tuple[Bar, ...]
    groups: tuple[MarkGroup, ...]
    requests: tuple[Request, ...]
    spans: tuple[Span, ...]
    axis: TimeAxis
    legend: tuple[Look, ...]
    now: float | None = None
    """While stepping: the time reached (a line there, the rest veiled)."""
    current: Mark | None = None
    """While stepping: the step being narrated (ringed)."""
    span_room: bool = False
    """Room above the lanes for span labels (kept at every step of a run that has a span)."""
    key: tuple[str, ...] = ()
    """Lines under the legend that say what short names on the figure stand for."""

    def lane_y(self) -> dict[str, float]:
        """The y position of each lane."""
        return {lane.name: lane.y for lane in self.lanes}


def stacked(names: Iterable[str]) -> tuple[Lane, ...]:
    """Lanes one unit apart, the first on top and the last at y = 0."""
    listed = list(names)
    return tuple(Lane(name, float(len(listed) - 1 - i)) for i, name in enumerate(listed))


def legend_of(
    bars: Iterable[Bar],
    groups: Iterable[MarkGroup],
    requests: Iterable[Request],
    spans: Iterable[Span],
    stepping: bool,
) -> tuple[Look, ...]:
    """One legend entry per look these facts draw, in reading order: leases, markers, lines
    and areas, then the current-step ring while `stepping`."""
    kinds = {bar.kind for bar in bars}
    used = {BAR_LOOKS[kind] for kind in kinds}
    used |= {group.look for group in groups if group.marks}
    if any(True for _ in requests):
        used.add(IN_NETWORK)
    if any(True for _ in spans):
        used.add(GAP)
    order = (LEASE, PAST_LEASE, LOCK_HELD, PAST_LOCK, *MARK_LOOKS, *AREA_LOOKS)
    found = [look for look in order if look in used]
    found += [look for look in sorted(used - set(order), key=lambda look: look.name)]
    if stepping and found:
        found.append(CURRENT)
    return tuple(found)
