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
from typing import Any, Final

import plotly.graph_objects as go

from lab.report import LabReport
from model.trace import Trace
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
    """Lease bars: per kind and lane one filled polygon trace, then their labels."""
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
    if leases:
        found.append(_lease_labels(leases, lane_y))
    return found


def _lease_labels(leases: Sequence[Bar], lane_y: dict[str, float]) -> dict[str, Any]:
    """The words at the start of each lease bar, inside it (a worker's own steps in that tick
    come after its grant, so they sit to the right of the words)."""
    return {
        "type": "scatter",
        "name": "lease labels",
        "showlegend": False,
        "x": [bar.start + LABEL_INSET for bar in leases],
        "y": [lane_y[bar.lane] for bar in leases],
        "text": [bar.label for bar in leases],
        "textposition": "middle right",
        "mode": "text",
        "textfont": {"size": 10, "color": LABEL_COLOUR},
        "hoverinfo": "skip",
        "cliponaxis": False,
    }


def _bar_labels(
    name: str, look: Look, bars: Sequence[Bar], lane_y: dict[str, float], position: str
) -> dict[str, Any]:
    """The words just above each bar, in its look's colour, with its sentence on hover: in the
    middle of the bar (`top center`) or from its start (`top right`)."""
    return {
        "type": "scatter",
        "name": name,
        "legendgroup": look.name,
        "showlegend": False,
        "x": [(b.start + b.end) / 2 if position == "top center" else b.start for b in bars],
        "y": [lane_y[bar.lane] + BAR_HALF_HEIGHT for bar in bars],
        "text": [bar.label for bar in bars],
        "textposition": position,
        "hovertext": [bar.hover for bar in bars],
        "hovertemplate": HOVER,
        "mode": "text",
        "textfont": {"size": 10, "color": look.colour},
        "cliponaxis": False,
    }


def _hatched_traces(facts: Swimlane, lane_y: dict[str, float]) -> list[dict[str, Any]]:
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
        found.append(_bar_labels(f"{kind} labels", look, mine, lane_y, "top center"))
    return found


def _crash_traces(facts: Swimlane, lane_y: dict[str, float]) -> list[dict[str, Any]]:
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
        _bar_labels("crash labels", CRASHED, found, lane_y, "top right"),
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
        "mode": "markers+text",
        "text": [m.label for m in marks],
        "textposition": "top center",
        "textfont": {"size": 10},
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


def _layout(facts: Swimlane, lane_y: dict[str, float]) -> dict[str, Any]:
    """Axes, lanes, bands, title and the legend below the plot."""
    top = max(lane_y.values())
    room = GAP_LABEL_ROOM if facts.span_room else 0.0
    legend_px = LEGEND_ROW_PX * math.ceil(len(facts.legend) / 2)
    plot_px = LANE_PX * len(lane_y) + (GAP_ROW_PX if room else 0)
    title: dict[str, Any] = {"text": facts.title, "font": {"size": 15}}
    if facts.subtitle:
        title["subtitle"] = {"text": facts.subtitle, "font": {"size": 12}}
    title |= {"x": 0, "xanchor": "left", "xref": "paper"}
    return {
        "height": TITLE_PX + plot_px + AXIS_PX + legend_px,
        "margin": {"l": 10, "r": 16, "t": TITLE_PX, "b": AXIS_PX + legend_px},
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


def swimlane_figure(facts: Swimlane) -> go.Figure:
    """The facts as one figure: bars, requests, marks, the ring, gap labels, then the legend."""
    lane_y = facts.lane_y()
    data = [
        *_lease_traces(facts, lane_y),
        *_hatched_traces(facts, lane_y),
        *_crash_traces(facts, lane_y),
        *_network_traces(facts, lane_y),
        *_arrow_traces(facts, lane_y),
        *(_mark_trace(group, lane_y) for group in facts.groups if group.marks),
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
