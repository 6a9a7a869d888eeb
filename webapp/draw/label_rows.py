"""Where the short words of a swimlane figure go so that no two of them overlap.

Above each lane there are a few rows of words (a step's token, a pause, a crash, a lease
whose bar has no room inside); below the receiver, the outcomes of its decisions. Words
are placed in the lowest row where they touch nothing placed before them, the words of
bars first, then the marks' words left to right. A word that finds no free row is left out
rather than drawn over another: a bar still shows what it is by its look (the legend names
it), a mark by its symbol, and the hover and the narration say the rest.

Widths are estimated for the narrowest plot the app draws (a phone's), so a figure that is
drawn wider only has more room between its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

NARROWEST_PLOT_PX: Final = 270
"""The narrowest plotting area a timeline gets (a 390 px phone, less the lane names)."""
CHAR_PX: Final = 6.2
"""A conservative width of one character of the 10 px label font."""
WIDE_CHARS: Final = frozenset("✔✘✖❚✉↩…!")
"""Symbols drawn wider than a letter (counted twice)."""
PAD_PX: Final = 6.0
"""Room kept between two words on a row."""
ABOVE_ROWS: Final = 2
"""Rows of words above a lane (more would reach the lane above)."""
BELOW_ROWS: Final = 2
"""Rows of words below the receiver's marks (the clock's row is beneath them)."""
LEFT: Final = "left"
CENTRE: Final = "center"


@dataclass(frozen=True)
class Wanted:
    """A word that wants a place: its lane, where it is anchored (its left end or its
    middle), whether it goes first (a bar's word) and an id to find it again."""

    lane: str
    x: float
    text: str
    anchor: str
    first: bool
    ident: int


@dataclass(frozen=True)
class Placed:
    """A word and the row it was given (0: nearest its lane)."""

    wanted: Wanted
    row: int


def text_px(text: str) -> float:
    """The width of a word in pixels, estimated on the generous side."""
    plain = text.replace("<br>", "\n").split("\n")
    return max(sum(2 if c in WIDE_CHARS else 1 for c in line) for line in plain) * CHAR_PX


def span(wanted: Wanted, x_per_px: float) -> tuple[float, float]:
    """The x interval a word covers, with its padding, at `x_per_px` x units per pixel."""
    width = (text_px(wanted.text) + PAD_PX) * x_per_px
    if wanted.anchor == LEFT:
        return wanted.x, wanted.x + width
    return wanted.x - width / 2, wanted.x + width / 2


@dataclass
class Rows:
    """The rows of every lane and what is already on them (x intervals)."""

    count: int
    x_per_px: float
    taken: dict[tuple[str, int], list[tuple[float, float]]]

    @staticmethod
    def empty(count: int, x_range: float) -> Rows:
        """Rows for a figure whose time axis is `x_range` units wide."""
        return Rows(count, x_range / NARROWEST_PLOT_PX, {})

    def free(self, lane: str, row: int, low: float, high: float) -> bool:
        """Whether the interval touches nothing already on this row of this lane."""
        return all(high <= a or low >= b for a, b in self.taken.get((lane, row), ()))

    def take(self, lane: str, row: int, low: float, high: float) -> None:
        """Mark an interval of a row as used (by a word, or by something else drawn there)."""
        self.taken.setdefault((lane, row), []).append((low, high))


def place(wanted: Sequence[Wanted], rows: Rows) -> list[Placed]:
    """Every word that finds a free row, with its row: bars' words first, then left to right."""
    placed = []
    for item in sorted(wanted, key=lambda w: (not w.first, w.x, w.ident)):
        low, high = span(item, rows.x_per_px)
        row = next((r for r in range(rows.count) if rows.free(item.lane, r, low, high)), None)
        if row is None:
            continue
        rows.take(item.lane, row, low, high)
        placed.append(Placed(item, row))
    return placed
