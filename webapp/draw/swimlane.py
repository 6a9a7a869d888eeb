"""The one swimlane drawer: every timeline, model run or real run, from `webapp.show.swimlane`
facts.

Lanes run top to bottom, time to the right. Lease bars are filled rectangles in their lane's
actor colour (faint with a dotted outline once outlived), pauses and held requests are
hatched, a crashed lane is a solid dark line; each request travels in the network just
below its sender's lane (dashed) and drops to the receiving lane where it was decided (an
arrow in its outcome's colour); marks carry their look's symbol; a gap is a shaded,
labelled stretch of time across every lane. While stepping, the current step is ringed,
a line marks "now" and a veil covers the time not reached yet. The legend is one entry per
look, drawn as the figure draws it. `timeline_figure` draws a model run after a number of
steps, `history_figure` a live-lab history.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import plotly.graph_objects as go

from lab.report import LabReport
from model.formats.trace import Trace
from webapp.draw.label_rows import (
    ABOVE_ROWS,
    BELOW_ROWS,
    CENTRE,
    LEFT,
    Rows,
    Wanted,
    place,
    text_px,
)
from webapp.show.lab_history import history_facts
from webapp.show.looks import CRASHED, CURRENT, GAP, GREY, IN_NETWORK, Look
from webapp.show.style import (
    ACTIVE_LEASE_OPACITY,
    BAND_FILL,
    CURRENT_STEP_COLOUR,
    FUTURE_FILL,
    GAP_FILL,
    OUTCOMES,
    PAUSED_LEASE_OPACITY,
    RECEIVER,
    Outcome,
    actor_colour,
)
from webapp.show.swimlane import (
    BAR_LOOKS,
    CRASH_BAR,
    HATCHED_KINDS,
    LEASE_BAR,
    LEASE_KINDS,
    LOCK_BAR,
    PAST_LEASE_BAR,
    PAST_LOCK_BAR,
    Bar,
    Mark,
    MarkGroup,
    Request,
    Span,
    Swimlane,
)
from webapp.show.trace_swimlane import trace_facts

BAR_HALF_HEIGHT: Final = 0.22
NETWORK_OFFSET: Final = 0.4
"""How far below its sender's lane a request travels while it is in the network."""
LANE_MARGIN_BELOW: Final = 0.45
LANE_MARGIN_ABOVE: Final = 0.6
GAP_LABEL_ROOM: Final = 1.4
"""Extra room above the top lane for the gap's label, in lane units."""
ARROW_HEAD_SIZE: Final = 15
ARROW_STANDOFF: Final = 9
"""Pixels between an arrowhead's tip and the reception marker it points at."""
LABEL_COLOUR: Final = "rgba(40, 40, 40, 0.8)"
LABEL_INSET: Final = 0.03
"""How far inside its bar a lease label starts, in ticks."""
CRASHED_WIDTH: Final = 5
LEGEND_ENTRY_PX: Final = 80
"""Width of a legend entry: the legend is a grid below the plot, two columns on a phone."""
LEGEND_ROW_PX: Final = 26
TITLE_PX: Final = 62
LANE_PX: Final = 54
GAP_ROW_PX: Final = 50
AXIS_PX: Final = 58
KEY_LINE_PX: Final = 16
KEY_GAP_PX: Final = 8
"""Heights: the room under the plot is the axis, then the legend in two columns (a phone's
width), so the legend never covers the plot or the axis title at any width."""
LEASE_STYLE: Final = {
    LEASE_BAR: (ACTIVE_LEASE_OPACITY, 1.0, "solid"),
    PAST_LEASE_BAR: (PAUSED_LEASE_OPACITY, 2.0, "dot"),
    LOCK_BAR: (ACTIVE_LEASE_OPACITY, 1.0, "solid"),
    PAST_LOCK_BAR: (PAUSED_LEASE_OPACITY, 2.0, "dot"),
}
"""(opacity, outline width, outline dash) of the bars of each lease kind."""
HOVER: Final = "%{hovertext}<extra></extra>"
RECEIVER_LANE: Final = RECEIVER
"""The lane whose marks are decisions: their words go below them, clear of the arrows."""
ROW_UNITS: Final = 15 / LANE_PX
"""The height of a row of words, in lane units (one lane is `LANE_PX` pixels)."""
MARK_RADIUS_PX: Final = 7.0
"""Half a mark's width: a lease's word inside its bar keeps clear of the marks on it."""
BELOW_MARK: Final = 0.2
"""Where the words below the receiver's decisions begin, under the marks."""


@dataclass(frozen=True)
class Words:
    """Where the figure's words go: each mark's word (x, y, text, plotly text position),
    the y of each bar's word above its lane, and which lease words fit inside their bar."""

    marks: dict[tuple[int, int], tuple[float, float, str, str]]
    above_bar: dict[Bar, float]
    inside: frozenset[Bar]


def _above(lane_y: float, row: int) -> float:
    """The y of a row of words above a lane (their bottom edge)."""
    return lane_y + BAR_HALF_HEIGHT + row * ROW_UNITS


def _fits_inside(bar: Bar, facts: Swimlane, rows: Rows) -> bool:
    """Whether a lease's word fits inside its bar from its start, clear of the marks and of
    the hatched areas drawn on the same lane."""
    low = bar.start + LABEL_INSET
    high = low + text_px(bar.label) * rows.x_per_px
    if high > bar.end:
        return False
    reach = MARK_RADIUS_PX * rows.x_per_px
    marks = [m.x for g in facts.groups for m in g.marks if m.lane == bar.lane]
    if any(low - reach < x < high + reach for x in marks):
        return False
    hatched = [b for b in facts.bars if b.kind in HATCHED_KINDS and b.lane == bar.lane]
    return all(high <= b.start or low >= b.end for b in hatched)


def _lane_below(facts: Swimlane, lane: str) -> str | None:
    """The lane drawn just below this one, if any."""
    ordered = sorted(facts.lanes, key=lambda each: -each.y)
    names = [each.name for each in ordered]
    index = names.index(lane)
    return names[index + 1] if index + 1 < len(names) else None


def _reserve_flight_words(facts: Swimlane, rows: Rows) -> None:
    """The words at the head of a request in flight hang below its sender's network path,
    into the rows of the lane below: that stretch of those rows is taken."""
    for request in (r for r in facts.requests if r.in_flight and r.flight_label):
        below = _lane_below(facts, request.lane)
        if below is None:
            continue
        width = text_px(request.flight_label) * rows.x_per_px
        head = MARK_RADIUS_PX * rows.x_per_px
        for row in range(rows.count):
            rows.take(below, row, request.end - width, request.end + head)


def _bar_words(facts: Swimlane, inside: frozenset[Bar]) -> dict[int, Wanted]:
    """The words of bars that go above their lane (all but leases that fit inside), by id."""
    found: dict[int, Wanted] = {}
    for index, bar in enumerate(facts.bars):
        if bar in inside or not bar.label:
            continue
        anchor = CENTRE if bar.kind in HATCHED_KINDS else LEFT
        x = (bar.start + bar.end) / 2 if anchor == CENTRE else bar.start
        found[index] = Wanted(bar.lane, x, bar.label, anchor, True, index)
    return found


def _mark_words(facts: Swimlane) -> dict[tuple[int, int], Wanted]:
    """The marks' words, by (group, mark); ids follow the bars' so that every id is one."""
    found: dict[tuple[int, int], Wanted] = {}
    for g, group in enumerate(facts.groups):
        for m, mark in enumerate(group.marks):
            if mark.label:
                ident = len(facts.bars) + len(found)
                found[(g, m)] = Wanted(mark.lane, mark.x, mark.label, CENTRE, False, ident)
    return found


def lay_out_words(facts: Swimlane, lane_y: dict[str, float]) -> Words:
    """Every word of the figure on a row where it overlaps no other word (`label_rows`):
    bars' words first, then the marks' words; the receiver's outcomes below its marks; the
    words at the heads of requests in flight reserve their place in the lane below."""
    rows = Rows.empty(ABOVE_ROWS, facts.axis.right - facts.axis.left)
    _reserve_flight_words(facts, rows)
    inside = frozenset(
        bar for bar in facts.bars if bar.kind in LEASE_KINDS and _fits_inside(bar, facts, rows)
    )
    bar_words = _bar_words(facts, inside)
    mark_words = _mark_words(facts)
    decisions = [w for w in mark_words.values() if w.lane == RECEIVER_LANE]
    others = [w for w in mark_words.values() if w.lane != RECEIVER_LANE]
    rows_of = {
        item.wanted.ident: _above(lane_y[item.wanted.lane], item.row)
        for item in place([*bar_words.values(), *others], rows)
    }
    for item in place(decisions, Rows(BELOW_ROWS, rows.x_per_px, {})):
        rows_of[item.wanted.ident] = lane_y[RECEIVER_LANE] - BELOW_MARK - item.row * ROW_UNITS
    marks = {
        key: (w.x, rows_of[w.ident], w.text, _word_position(w))
        for key, w in mark_words.items()
        if w.ident in rows_of
    }
    above_bar = {facts.bars[i]: rows_of[i] for i in bar_words if i in rows_of}
    return Words(marks, above_bar, inside)


def _word_position(word: Wanted) -> str:
    """Plotly's text position of a mark's word: above its row's y, or below the receiver's."""
    return "bottom center" if word.lane == RECEIVER_LANE else "top center"


def hatched_style(look: Look) -> dict[str, Any]:
    """A hatched, dotted-outlined area in the look's colour (a pause, a held request)."""
    return {
        "mode": "lines",
        "fill": "toself",
        "fillcolor": "rgba(0, 0, 0, 0)",
        "fillpattern": {"shape": "/", "fgcolor": look.colour, "size": 7, "solidity": 0.25},
        "line": {"color": look.colour, "width": 1.5, "dash": "dot"},
    }


def _rectangles(
    bars: Sequence[Bar], lane_y: dict[str, float]
) -> tuple[list[float | None], list[float | None]]:
    """Closed rectangle outlines of the bars, separated by None (one polygon each)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for bar in bars:
        middle = lane_y[bar.lane]
        low, high = middle - BAR_HALF_HEIGHT, middle + BAR_HALF_HEIGHT
        xs += [bar.start, bar.end, bar.end, bar.start, bar.start, None]
        ys += [low, low, high, high, low, None]
    return xs, ys


def _lease_traces(facts: Swimlane, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """Lease bars: per kind and lane one filled polygon trace (their words come later)."""
    leases = [bar for bar in facts.bars if bar.kind in LEASE_KINDS]
    found = []
    for kind in LEASE_KINDS:
        look = BAR_LOOKS[kind]
        opacity, width, dash = LEASE_STYLE[kind]
        for lane in (lane.name for lane in facts.lanes):
            mine = [bar for bar in leases if bar.lane == lane and bar.kind == kind]
            if not mine:
                continue
            colour = actor_colour(lane)
            xs, ys = _rectangles(mine, lane_y)
            found.append(
                {
                    "type": "scatter",
                    "name": f"{lane} {look.name}",
                    "legendgroup": look.name,
                    "showlegend": False,
                    "x": xs,
                    "y": ys,
                    "mode": "lines",
                    "fill": "toself",
                    "fillcolor": colour,
                    "opacity": opacity,
                    "line": {"color": colour, "width": width, "dash": dash},
                    "hoverinfo": "skip",
                }
            )
    return found


def _lease_labels(
    leases: Sequence[Bar], lane_y: dict[str, float], words: Words
) -> list[dict[str, Any]]:
    """The words of each lease bar: inside it from its start where nothing else is drawn
    there, else just above its start (in the rows of words above its lane)."""
    inside = [bar for bar in leases if bar in words.inside]
    above = [bar for bar in leases if bar in words.above_bar]
    found = []
    if inside:
        found.append(
            {
                "type": "scatter",
                "name": "lease labels",
                "showlegend": False,
                "x": [bar.start + LABEL_INSET for bar in inside],
                "y": [lane_y[bar.lane] for bar in inside],
                "text": [bar.label for bar in inside],
                "textposition": "middle right",
                "mode": "text",
                "textfont": {"size": 10, "color": LABEL_COLOUR},
                "hoverinfo": "skip",
                "cliponaxis": False,
            }
        )
    if above:
        found.append(
            {
                "type": "scatter",
                "name": "lease labels above",
                "showlegend": False,
                "x": [bar.start for bar in above],
                "y": [words.above_bar[bar] for bar in above],
                "text": [bar.label for bar in above],
                "textposition": "top right",
                "mode": "text",
                "textfont": {"size": 10, "color": LABEL_COLOUR},
                "hoverinfo": "skip",
                "cliponaxis": False,
            }
        )
    return found


def _bar_labels(
    name: str, look: Look, bars: Sequence[Bar], words: Words, position: str
) -> dict[str, Any]:
    """The words above each bar, in its look's colour, with its sentence on hover: in the
    middle of the bar (`top center`) or from its start (`top right`), on the row of words
    the layout gave it (a bar whose word found no free row has none)."""
    bars = [bar for bar in bars if bar in words.above_bar]
    return {
        "type": "scatter",
        "name": name,
        "legendgroup": look.name,
        "showlegend": False,
        "x": [(b.start + b.end) / 2 if position == "top center" else b.start for b in bars],
        "y": [words.above_bar[bar] for bar in bars],
        "text": [bar.label for bar in bars],
        "textposition": position,
        "hovertext": [bar.hover for bar in bars],
        "hovertemplate": HOVER,
        "mode": "text",
        "textfont": {"size": 10, "color": look.colour},
        "cliponaxis": False,
    }


def _hatched_traces(
    facts: Swimlane, lane_y: dict[str, float], words: Words
) -> list[dict[str, Any]]:
    """Per hatched kind (pauses, then held requests): its areas, then its labels above."""
    found: list[dict[str, Any]] = []
    for kind in HATCHED_KINDS:
        mine = [bar for bar in facts.bars if bar.kind == kind]
        if not mine:
            continue
        look = BAR_LOOKS[kind]
        xs, ys = _rectangles(mine, lane_y)
        found.append(
            {
                "type": "scatter",
                "name": look.name,
                "legendgroup": look.name,
                "showlegend": False,
                "x": xs,
                "y": ys,
                **hatched_style(look),
                "hoverinfo": "skip",
            }
        )
        found.append(_bar_labels(f"{kind} labels", look, mine, words, "top center"))
    return found


def _crash_traces(facts: Swimlane, lane_y: dict[str, float], words: Words) -> list[dict[str, Any]]:
    """A crashed worker's lane, ended: a solid dark line from the crash to now, labelled."""
    found = [bar for bar in facts.bars if bar.kind == CRASH_BAR]
    if not found:
        return []
    xs: list[float | None] = []
    ys: list[float | None] = []
    for bar in found:
        y = lane_y[bar.lane]
        xs += [bar.start, bar.end, None]
        ys += [y, y, None]
    return [
        {
            "type": "scatter",
            "name": CRASHED.name,
            "legendgroup": CRASHED.name,
            "showlegend": False,
            "x": xs,
            "y": ys,
            "mode": "lines",
            "line": {"color": CRASHED.colour, "width": CRASHED_WIDTH, "dash": CRASHED.dash},
            "hoverinfo": "skip",
        },
        _bar_labels("crash labels", CRASHED, found, words, "top right"),
    ]


def _network_traces(facts: Swimlane, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """Each request's path in the network (dashed, the sender's colour), to its decision or to
    now; a request still in flight gets a label at its head; hover sits mid-path."""
    sent = facts.requests
    if not sent:
        return []
    found = []
    for lane in (lane.name for lane in facts.lanes):
        mine = [r for r in sent if r.lane == lane]
        if not mine:
            continue
        y = lane_y[lane]
        xs: list[float | None] = []
        ys: list[float | None] = []
        for request in mine:
            xs += [request.sent, request.sent, request.end, None]
            ys += [y, y - NETWORK_OFFSET, y - NETWORK_OFFSET, None]
        found.append(
            {
                "type": "scatter",
                "name": f"{lane} {IN_NETWORK.name}",
                "legendgroup": IN_NETWORK.name,
                "showlegend": False,
                "x": xs,
                "y": ys,
                "mode": "lines",
                "line": {"color": actor_colour(lane), "width": 2, "dash": IN_NETWORK.dash},
                "hoverinfo": "skip",
            }
        )
    flying = [r for r in sent if r.in_flight]
    found.append(
        {
            "type": "scatter",
            "name": "in flight",
            "legendgroup": IN_NETWORK.name,
            "showlegend": False,
            "x": [r.end for r in flying],
            "y": [lane_y[r.lane] - NETWORK_OFFSET for r in flying],
            "text": [r.flight_label for r in flying],
            "textposition": "bottom left",
            "textfont": {"size": 10, "color": LABEL_COLOUR},
            "mode": "markers+text",
            "marker": {"symbol": "circle", "size": 7, "color": GREY},
            "hovertext": [r.hover for r in flying],
            "hovertemplate": HOVER,
            "cliponaxis": False,
        }
    )
    found.append(_request_hover_trace(sent, lane_y))
    return found


def _request_hover_trace(sent: Sequence[Request], lane_y: dict[str, float]) -> dict[str, Any]:
    """Invisible points in the middle of every request's path that say what it carried.

    Hover sits only mid-path: at its ends it would outbid the step markers beneath (plotly
    prefers the smaller of two markers under the pointer).
    """
    return {
        "type": "scatter",
        "name": "request hover",
        "showlegend": False,
        "x": [(r.sent + r.end) / 2 for r in sent],
        "y": [lane_y[r.lane] - NETWORK_OFFSET for r in sent],
        "hovertext": [r.hover for r in sent],
        "hovertemplate": HOVER,
        "hoverlabel": {"bgcolor": [r.outcome.colour if r.outcome else GREY for r in sent]},
        "mode": "markers",
        "marker": {"size": 0, "opacity": 0},
    }


def _arrow_traces(facts: Swimlane, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """The drop of each decided request from the network to where it was decided: one arrow
    trace per outcome and kind of request (read or write), the head at the decision's mark."""
    decided = [r for r in facts.requests if r.outcome is not None]
    return [
        _arrow_trace(outcome, read, chosen, lane_y)
        for outcome in OUTCOMES
        for read in (False, True)
        if (chosen := [r for r in decided if r.outcome == outcome and r.is_read == read])
    ]


def _arrow_trace(
    outcome: Outcome, read: bool, decided: Sequence[Request], lane_y: dict[str, float]
) -> dict[str, Any]:
    """Arrows of one colour and weight: top, head, then a None gap (no hover of their own)."""
    colour = outcome.colour
    xs: list[float | None] = []
    ys: list[float | None] = []
    for request in decided:
        xs += [request.end, request.end, None]
        ys += [lane_y[request.lane] - NETWORK_OFFSET, lane_y[request.to_lane], None]
    return {
        "type": "scatter",
        "name": f"{outcome.key} {'read' if read else 'write'} arrows",
        "showlegend": False,
        "x": xs,
        "y": ys,
        "mode": "lines+markers",
        # plotly.js backs each line off from its arrowhead by default (line.backoff "auto")
        "line": {"color": colour, "width": 1.2 if read else 2.0},
        "marker": {
            "symbol": "arrow",
            "angleref": "previous",
            "standoff": ARROW_STANDOFF,
            "color": colour,
            "size": [0, ARROW_HEAD_SIZE, 0] * len(decided),
            # a size list would otherwise make plotly.js draw faint, white-rimmed bubbles
            "opacity": 1,
            "line": {"width": 0},
        },
        "hoverinfo": "skip",
        "cliponaxis": False,
    }


def _mark_trace(group: MarkGroup, lane_y: dict[str, float]) -> dict[str, Any]:
    """The marks of one look, with their short labels and their sentence on hover."""
    look, marks = group.look, group.marks
    return {
        "type": "scatter",
        "name": look.name,
        "legendgroup": look.name,
        "showlegend": False,
        "x": [m.x for m in marks],
        "y": [lane_y[m.lane] for m in marks],
        "mode": "markers",
        "hovertext": [m.hover for m in marks],
        "hovertemplate": HOVER,
        "marker": {
            "symbol": look.symbol,
            "size": look.size,
            "color": [m.colour for m in marks],
            "line": {"width": 1.5},
        },
        "cliponaxis": False,
    }


def _ring(current: Mark, lane_y: dict[str, float]) -> dict[str, Any]:
    """The ring around the step being narrated."""
    return {
        "type": "scatter",
        "name": CURRENT.name,
        "legendgroup": CURRENT.name,
        "showlegend": False,
        "x": [current.x],
        "y": [lane_y[current.lane]],
        "mode": "markers",
        "hovertext": [current.hover],
        "hovertemplate": HOVER,
        "marker": {
            "symbol": CURRENT.symbol,
            "size": CURRENT.size,
            "color": CURRENT.colour,
            "line": {"width": CURRENT.outline_width, "color": CURRENT.outline},
        },
        "cliponaxis": False,
    }


def _gap_shapes(spans: Sequence[Span]) -> list[dict[str, Any]]:
    """A shaded stretch of time across every lane for each gap."""
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": span.start,
            "x1": span.end,
            "y0": 0,
            "y1": 1,
            "fillcolor": GAP_FILL,
            "line": {"color": GAP.colour, "width": 1, "dash": "dot"},
            "layer": "below",
        }
        for span in spans
    ]


def _anchor(middle: float, right: float) -> str:
    """Where a label is anchored so that it stays on the plot: by the third it sits in."""
    if middle < right / 3:
        return "left"
    if middle > 2 * right / 3:
        return "right"
    return "center"


def _gap_labels(spans: Sequence[Span], top: float, right: float) -> list[dict[str, Any]]:
    """The gaps' words above the lanes, kept inside the plot, with their story on hover."""
    if not spans:
        return []
    anchors = [_anchor((span.start + span.end) / 2, right) for span in spans]
    return [
        {
            "type": "scatter",
            "name": "gap labels",
            "legendgroup": GAP.name,
            "showlegend": False,
            "x": [
                {"left": s.start, "right": s.end}.get(a, (s.start + s.end) / 2)
                for s, a in zip(spans, anchors, strict=True)
            ],
            "y": [top + GAP_LABEL_ROOM * 0.72 for _ in spans],
            "text": [span.label for span in spans],
            "textposition": [
                {"left": "middle right", "right": "middle left"}.get(a, "middle center")
                for a in anchors
            ],
            "textfont": {"size": 11, "color": GAP.colour},
            "hovertext": [span.hover for span in spans],
            "hovertemplate": HOVER,
            "mode": "text",
            "cliponaxis": False,
        }
    ]


def _vertical(x: float, colour: str, width: float, dash: str, layer: str) -> dict[str, Any]:
    """A vertical line across the plot at x."""
    return {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": colour, "width": width, "dash": dash},
        "layer": layer,
    }


def _band_shapes(facts: Swimlane) -> list[dict[str, Any]]:
    """With ticks of its own: every other tick's band shaded, a faint line where each begins."""
    if not facts.axis.ticks:
        return []
    shapes: list[dict[str, Any]] = []
    for t in range(int(facts.axis.left), int(facts.axis.right)):
        if t % 2:
            shapes.append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "paper",
                    "x0": t,
                    "x1": t + 1,
                    "y0": 0,
                    "y1": 1,
                    "fillcolor": BAND_FILL,
                    "line": {"width": 0},
                    "layer": "below",
                }
            )
        shapes.append(_vertical(float(t), "#d5d8de", 1, "solid", "below"))
    return shapes


def _now_shapes(facts: Swimlane) -> list[dict[str, Any]]:
    """While stepping: a line at "now", and a veil over the time not reached yet."""
    if facts.now is None:
        return []
    veil = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": facts.now,
        "x1": facts.axis.right,
        "y0": 0,
        "y1": 1,
        "fillcolor": FUTURE_FILL,
        "line": {"width": 0},
        "layer": "above",
    }
    return [veil, _vertical(facts.now, CURRENT_STEP_COLOUR, 2, "dash", "above")]


def _legend_entry(look: Look) -> dict[str, Any]:
    """A legend-only trace (no points) drawn as the figure draws this look."""
    entry: dict[str, Any] = {
        "type": "scatter",
        "name": look.name,
        "legendgroup": look.name,
        "x": [None],
        "y": [None],
        "hoverinfo": "skip",
    }
    if look.hatched:
        entry.update(hatched_style(look), x=[None, None], y=[None, None])
        return entry
    if look.dash:
        entry.update(mode="lines", line={"color": look.colour, "width": 3, "dash": look.dash})
        return entry
    marker: dict[str, Any] = {"symbol": look.symbol, "size": min(look.size, 12)}
    marker["color"] = look.fill or look.colour
    if look.opacity is not None:
        marker["opacity"] = look.opacity
    if look.outline:
        marker["line"] = {"width": look.outline_width, "color": look.outline}
    entry.update(mode="markers", marker=marker)
    return entry


def _x_axis(facts: Swimlane) -> dict[str, Any]:
    """The time axis: the facts' own ticks in bands, or the library's ticks on a grid."""
    axis = facts.axis
    drawn: dict[str, Any] = {
        "title": {"text": axis.title, "standoff": 6},
        "range": [axis.left, axis.right],
        "zeroline": False,
    }
    if axis.ticks:
        drawn |= {
            "tickvals": [x for x, _ in axis.ticks],
            "ticktext": [text for _, text in axis.ticks],
            "ticks": "",
            "showgrid": False,
            "fixedrange": True,
        }
    else:
        drawn |= {"showgrid": True, "gridcolor": "#dddddd"}
    return drawn


def _key_annotation(facts: Swimlane, below: float) -> list[dict[str, Any]]:
    """The key to the figure's short names, under the legend (`below`: how far under the
    plot, as a share of its height), one name a line."""
    if not facts.key:
        return []
    return [
        {
            "text": "<br>".join(facts.key),
            "xref": "paper",
            "yref": "paper",
            "x": 0,
            "y": -below,
            "xanchor": "left",
            "yanchor": "top",
            "align": "left",
            "showarrow": False,
            "font": {"size": 11, "color": LABEL_COLOUR},
        }
    ]


def _layout(facts: Swimlane, lane_y: dict[str, float]) -> dict[str, Any]:
    """Axes, lanes, bands, title and the legend below the plot."""
    top = max(lane_y.values())
    room = GAP_LABEL_ROOM if facts.span_room else 0.0
    legend_px = LEGEND_ROW_PX * math.ceil(len(facts.legend) / 2)
    key_px = KEY_LINE_PX * len(facts.key) + (KEY_GAP_PX if facts.key else 0)
    plot_px = LANE_PX * len(lane_y) + (GAP_ROW_PX if room else 0)
    title: dict[str, Any] = {"text": facts.title, "font": {"size": 15}}
    if facts.subtitle:
        title["subtitle"] = {"text": facts.subtitle, "font": {"size": 12}}
    title |= {"x": 0, "xanchor": "left", "xref": "paper"}
    return {
        "height": TITLE_PX + plot_px + AXIS_PX + legend_px + key_px,
        "margin": {"l": 10, "r": 16, "t": TITLE_PX, "b": AXIS_PX + legend_px + key_px},
        "annotations": _key_annotation(facts, (AXIS_PX + legend_px + KEY_GAP_PX) / plot_px),
        "title": title,
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "plot_bgcolor": "white",
        "showlegend": True,
        "legend": {
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": -AXIS_PX / plot_px,
            "yanchor": "top",
            "font": {"size": 11},
            "entrywidth": LEGEND_ENTRY_PX,
            "entrywidthmode": "pixels",
            "itemclick": False,
            "itemdoubleclick": False,
        },
        "uirevision": "timeline",
        "shapes": [*_band_shapes(facts), *_gap_shapes(facts.spans), *_now_shapes(facts)],
        "xaxis": _x_axis(facts),
        "yaxis": {
            "tickvals": list(lane_y.values()),
            "ticktext": [f"<b>{name}</b>" for name in lane_y],
            "range": [
                min(lane_y.values()) - LANE_MARGIN_BELOW,
                top + LANE_MARGIN_ABOVE + room,
            ],
            "showgrid": True,
            "gridcolor": "#eeeeee",
            "zeroline": False,
            "fixedrange": True,
            "automargin": True,
        },
    }


def _mark_labels(words: Words) -> list[dict[str, Any]]:
    """The marks' words, each on the row the layout gave it (above its lane, or below the
    receiver's decisions); none for a mark whose word found no free row."""
    if not words.marks:
        return []
    placed = list(words.marks.values())
    return [
        {
            "type": "scatter",
            "name": "mark labels",
            "showlegend": False,
            "x": [x for x, _, _, _ in placed],
            "y": [y for _, y, _, _ in placed],
            "text": [text for _, _, text, _ in placed],
            "textposition": [position for _, _, _, position in placed],
            "mode": "text",
            "textfont": {"size": 10, "color": LABEL_COLOUR},
            "hoverinfo": "skip",
            "cliponaxis": False,
        }
    ]


def swimlane_figure(facts: Swimlane) -> go.Figure:
    """The facts as one figure: bars, requests, marks, the ring, gap labels, then the legend."""
    lane_y = facts.lane_y()
    words = lay_out_words(facts, lane_y)
    leases = [bar for bar in facts.bars if bar.kind in LEASE_KINDS]
    data = [
        *_lease_traces(facts, lane_y),
        *_lease_labels(leases, lane_y, words),
        *_hatched_traces(facts, lane_y, words),
        *_crash_traces(facts, lane_y, words),
        *_network_traces(facts, lane_y),
        *_arrow_traces(facts, lane_y),
        *(_mark_trace(group, lane_y) for group in facts.groups if group.marks),
        *_mark_labels(words),
        *([_ring(facts.current, lane_y)] if facts.current is not None else []),
        *_gap_labels(facts.spans, max(lane_y.values()), facts.axis.right),
        *(_legend_entry(look) for look in facts.legend),
    ]
    for entry in data:  # a stable identity per trace, so the browser updates it in place
        entry["uid"] = (
            entry["name"] if entry.get("showlegend") is False else f"legend {entry['name']}"
        )
    # Every part is built from this module's own constants, so plotly's per-attribute
    # validation is skipped (a test validates the figures once).
    return go.Figure({"data": data, "layout": _layout(facts, lane_y)}, _validate=False)


def timeline_figure(trace: Trace, upto: int | None = None) -> go.Figure:
    """A model run's figure after its first `upto` steps (the whole run when None).

    Built for one step only: the page's player asks for the figure of the step it shows.
    """
    return swimlane_figure(trace_facts(trace, upto))


def history_figure(report: LabReport, title: str = "") -> go.Figure:
    """A live-lab history's figure, seconds on the time axis."""
    return swimlane_figure(history_facts(report, title))
