"""One swimlane drawer for every timeline fed by `webapp.show.swimlane` facts.

Lanes run top to bottom, time to the right; bars are leases (in their lane's actor colour,
faint and dotted once outlived) and hatched pauses or holds, arrows run from a request's
send to its decision in the colour of its outcome, and marks carry their own symbols and
colours, one legend entry per group. A live-lab history is drawn here through
`history_figure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import plotly.graph_objects as go

from lab.report import LabReport
from webapp.show.lab_history import history_facts
from webapp.show.style import ACTIVE_LEASE_OPACITY, PAUSED_LEASE_OPACITY, actor_colour
from webapp.show.swimlane import (
    HOLD,
    LEASE,
    PAST_LEASE,
    PAUSE,
    Arrow,
    Bar,
    MarkGroup,
    Swimlane,
)

BAR: Final = 0.22
PAUSE_BAR: Final = 0.3
LEASE_LOOKS: Final = {
    LEASE: (ACTIVE_LEASE_OPACITY, "solid"),
    PAST_LEASE: (PAUSED_LEASE_OPACITY, "dot"),
}
"""Opacity and outline dash of a lease bar while current and once outlived."""
HATCHED_KINDS: Final = (PAUSE, HOLD)


def _rectangles(bars: Sequence[Bar], lane_y: dict[str, float], half: float) -> dict[str, list[Any]]:
    """Closed outlines of bars, separated by None, as one scatter's x and y."""
    xs: list[Any] = []
    ys: list[Any] = []
    for bar in bars:
        y = lane_y[bar.lane]
        xs += [bar.start, bar.end, bar.end, bar.start, bar.start, None]
        ys += [y - half, y - half, y + half, y + half, y - half, None]
    return {"x": xs or [None], "y": ys or [None]}


def _lease_traces(facts: Swimlane, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """Per lane, its current leases and then its outlived ones, in the lane's colour."""
    traces: list[dict[str, Any]] = []
    for lane in facts.lanes:
        colour = actor_colour(lane)
        for kind, (opacity, dash) in LEASE_LOOKS.items():
            mine = [bar for bar in facts.bars if bar.lane == lane and bar.kind == kind]
            if not mine:
                continue
            name = mine[0].legend
            traces.append(
                {
                    "type": "scatter",
                    "name": name,
                    "legendgroup": name,
                    "showlegend": not any(t.get("legendgroup") == name for t in traces),
                    "mode": "lines",
                    "fill": "toself",
                    "fillcolor": colour,
                    "opacity": opacity,
                    "line": {"color": colour, "width": 1 if dash == "solid" else 2, "dash": dash},
                    "hoverinfo": "skip",
                    **_rectangles(mine, lane_y, BAR),
                }
            )
    return traces


def _hatched_traces(facts: Swimlane, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """Pauses, then held requests: one hatched trace each."""
    traces: list[dict[str, Any]] = []
    for kind in HATCHED_KINDS:
        mine = [bar for bar in facts.bars if bar.kind == kind]
        if not mine:
            continue
        traces.append(
            {
                "type": "scatter",
                "name": mine[0].legend,
                "mode": "lines",
                "fill": "toself",
                "fillcolor": "rgba(0,0,0,0.05)",
                "fillpattern": {"shape": "/", "fgcolor": "#555555", "size": 7},
                "line": {"color": "#555555", "width": 1},
                "hoverinfo": "skip",
                **_rectangles(mine, lane_y, PAUSE_BAR),
            }
        )
    return traces


def _arrow_traces(arrows: Sequence[Arrow], lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """The arrows, one trace per colour, each with its head at the decision."""
    by_colour: dict[str, tuple[list[Any], list[Any]]] = {}
    for arrow in arrows:
        xs, ys = by_colour.setdefault(arrow.colour, ([], []))
        xs += [arrow.x, arrow.to_x, None]
        ys += [lane_y[arrow.lane], lane_y[arrow.to_lane], None]
    return [
        {
            "type": "scatter",
            "name": "requests",
            "showlegend": False,
            "mode": "lines+markers",
            "x": xs,
            "y": ys,
            "line": {"color": colour, "width": 1.5},
            "marker": {
                "symbol": "arrow",
                "angleref": "previous",
                "size": [0, 11, 0] * (len(xs) // 3),
                "color": colour,
                "opacity": 1,
                "line": {"width": 0},
            },
            "hoverinfo": "skip",
        }
        for colour, (xs, ys) in by_colour.items()
    ]


def _mark_trace(group: MarkGroup, lane_y: dict[str, float]) -> dict[str, Any]:
    """One legend entry's marks; a labelled group writes its labels above the marks."""
    marks = group.marks
    trace: dict[str, Any] = {
        "type": "scatter",
        "name": group.legend,
        "mode": "markers+text" if group.labelled else "markers",
        "x": [m.x for m in marks],
        "y": [lane_y[m.lane] for m in marks],
    }
    if group.labelled:
        trace |= {
            "text": [m.label for m in marks],
            "textposition": "top center",
            "textfont": {"size": 10},
        }
    trace["hovertext"] = [m.hover for m in marks]
    trace["hovertemplate"] = "%{x:.3f} s: %{hovertext}<extra></extra>"
    symbols = {m.symbol for m in marks}
    colours = {m.colour for m in marks}
    trace["marker"] = {
        "size": group.size,
        "symbol": symbols.pop()
        if len(symbols) == 1 and not group.labelled
        else [m.symbol for m in marks],
        "color": colours.pop()
        if len(colours) == 1 and not group.labelled
        else [m.colour for m in marks],
    }
    if group.labelled:
        trace["marker"]["line"] = {"width": 1}
    trace["cliponaxis"] = False
    return trace


def swimlane_figure(facts: Swimlane, title: str = "") -> go.Figure:
    """The facts as a swimlane figure: bars, then arrows, then marks on top."""
    lane_y = facts.lane_y()
    data = [
        *_lease_traces(facts, lane_y),
        *_hatched_traces(facts, lane_y),
        *_arrow_traces(facts.arrows, lane_y),
        *(_mark_trace(group, lane_y) for group in facts.groups),
    ]
    layout = {
        "height": 150 + 62 * len(lane_y),
        "margin": {"l": 70, "r": 20, "t": 80, "b": 50},
        "title": {"text": title, "font": {"size": 15}, "y": 0.98, "yanchor": "top"},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "plot_bgcolor": "white",
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "font": {"size": 11}},
        "xaxis": {
            "title": {"text": facts.time_title},
            "range": [0, facts.end * 1.03 + 0.05],
            "showgrid": True,
            "gridcolor": "#dddddd",
            "zeroline": False,
        },
        "yaxis": {
            "tickvals": list(lane_y.values()),
            "ticktext": [f"<b>{name}</b>" for name in lane_y],
            "range": [-0.6, max(lane_y.values()) + 0.6],
            "fixedrange": True,
            "showgrid": True,
            "gridcolor": "#f0f0f0",
            "zeroline": False,
        },
    }
    return go.Figure({"data": data, "layout": layout})


def history_figure(report: LabReport, title: str = "") -> go.Figure:
    """A live-lab history as a swimlane figure with seconds on the time axis."""
    return swimlane_figure(history_facts(report), title)
