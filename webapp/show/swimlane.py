"""The facts of a swimlane timeline, whatever ran: lanes, bars, marks and arrows on a time axis.

A lab history is turned into these facts by `webapp.show.lab_history`; `webapp.draw.swimlane`
draws them. The facts say what happened where and when, and which outcome or actor it
belongs to; the drawer alone decides how that looks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

LEASE: Final = "lease"
"""A bar kind: a lease while it is current."""
PAST_LEASE: Final = "past"
"""A bar kind: a holder still acting on its token after its lease ended."""
PAUSE: Final = "pause"
"""A bar kind: a process stopped (hatched)."""
HOLD: Final = "hold"
"""A bar kind: a request held in flight (hatched)."""

BAR_KINDS: Final = (LEASE, PAST_LEASE, PAUSE, HOLD)
OWN_COLOUR_KINDS: Final = (LEASE, PAST_LEASE)
"""Bar kinds drawn in their lane's actor colour, one figure trace per lane."""


@dataclass(frozen=True)
class Bar:
    """A span of time on a lane: a lease, a lease outlived, a pause or a held request."""

    lane: str
    start: float
    end: float
    kind: str
    legend: str


@dataclass(frozen=True)
class Mark:
    """One event at one time on one lane, with its symbol, colour, short label and hover text."""

    lane: str
    x: float
    symbol: str
    colour: str
    hover: str
    label: str = ""


@dataclass(frozen=True)
class MarkGroup:
    """Marks shown under one legend entry (an outcome, or the plain events)."""

    legend: str
    marks: tuple[Mark, ...]
    size: int
    labelled: bool = False


@dataclass(frozen=True)
class Arrow:
    """A request from its sender's lane at one time to where it was decided at a later one."""

    lane: str
    x: float
    to_lane: str
    to_x: float
    colour: str


@dataclass(frozen=True)
class Swimlane:
    """Everything a swimlane figure shows, top lane first, with the time axis' title and end."""

    lanes: tuple[str, ...]
    bars: tuple[Bar, ...]
    groups: tuple[MarkGroup, ...]
    arrows: tuple[Arrow, ...]
    end: float
    time_title: str

    def lane_y(self) -> dict[str, float]:
        """The y position of each lane: the first on top."""
        return {name: float(len(self.lanes) - 1 - i) for i, name in enumerate(self.lanes)}
