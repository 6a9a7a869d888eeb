"""The live lab's history on a swimlane timeline: seconds on the x axis, one lane per worker,
etcd above and the store below; leases as bars, pauses as hatched bars on the paused worker's
lane, requests as arrows from the worker to the store coloured by what became of them.

It reads a `LabReport` (the merged order of a real history) and takes its colours, symbols
and outcome words from `webapp.show.style`, so a rejected write looks the same here as in the
model's timeline next to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import plotly.graph_objects as go

from lab.describe import describe
from lab.history import Happening
from lab.report import LabReport
from webapp.show.style import (
    ACCEPTED,
    ACTIVE_LEASE_OPACITY,
    CHECKED,
    PAUSED_LEASE_OPACITY,
    READ,
    REJECTED,
    VIOLATING,
    Outcome,
    actor_colour,
)

BAR: Final = 0.22
PAUSE_BAR: Final = 0.3
GREY: Final = "#777777"
ETCD_LANE: Final = "etcd"
STORE_LANE: Final = "store"
Box = tuple[str, float, float]
"""A bar on a lane: lane name, start and end time."""


def lanes(report: LabReport) -> dict[str, float]:
    """The y position of each lane: etcd on top, the workers, the store at the bottom."""
    workers = [f"W{w}" for w in range(1, report.history.settings.workers + 1)]
    names = [ETCD_LANE, *workers, STORE_LANE]
    return {name: float(len(names) - 1 - i) for i, name in enumerate(names)}


def _end(report: LabReport) -> float:
    """The time of the last event."""
    return max((e.t for e in report.line.events), default=1.0)


def _rectangles(
    boxes: Sequence[Box], lane_y: dict[str, float], half: float
) -> dict[str, list[Any]]:
    """Closed outlines of bars, separated by None, as one scatter's x and y."""
    xs: list[Any] = []
    ys: list[Any] = []
    for lane, start, end in boxes:
        y = lane_y[lane]
        xs += [start, end, end, start, start, None]
        ys += [y - half, y - half, y + half, y + half, y - half, None]
    return {"x": xs or [None], "y": ys or [None]}


def lease_boxes(report: LabReport) -> tuple[list[Box], list[Box]]:
    """Per grant, its lease (grant to revocation or release), and the time its worker went
    on acting on it after the lease had ended (sends, the release)."""
    end = _end(report)
    live: list[Box] = []
    past: list[Box] = []
    for grant in report.line.grants.values():
        lane = f"W{grant.worker}"
        stop = grant.ended if grant.ended is not None else end
        live.append((lane, grant.t, stop))
        later = [
            e.t
            for e in report.line.events
            if e.worker == grant.worker
            and e.get("grant") == grant.revision
            and e.kind in ("send", "release", "deliver", "apply", "check")
            and e.t > stop
        ]
        if later:
            past.append((lane, stop, max(later)))
    return live, past


def spans(report: LabReport, start: str, stop: str, lane_of: str) -> list[Box]:
    """Bars from each `start` event to the next `stop` event of the same worker."""
    opened: dict[int, float] = {}
    found: list[Box] = []
    for event in report.line.events:
        if event.kind == start:
            opened[event.worker] = event.t
        elif event.kind == stop and event.worker in opened:
            lane = lane_of.format(w=event.worker)
            found.append((lane, opened.pop(event.worker), event.t))
    end = _end(report)
    found += [(lane_of.format(w=w), t, end) for w, t in opened.items()]
    return found


def _violations_by_event(report: LabReport) -> dict[int, list[str]]:
    """The property violations of each history event (by index), as sentences."""
    found: dict[int, list[str]] = {}
    for verdict in report.properties.values():
        for violation in verdict.violations:
            found.setdefault(violation.event, []).append(f"{violation.prop}: {violation.reason}")
    return found


def outcome_of(event: Happening, violating: bool) -> Outcome | None:
    """How a store decision looks: accepted, violating, rejected, read, checked."""
    if event.kind == "check":
        return CHECKED if event.get("passed") else REJECTED
    if event.kind == "apply" or event.get("outcome") == "accepted":
        return VIOLATING if violating else ACCEPTED
    if event.get("outcome") == "rejected":
        return REJECTED
    if event.get("outcome") == "read":
        return READ
    return None


def _lane_of(event: Happening) -> str:
    """Where an event's marker goes."""
    if event.kind in ("grant", "revoked"):
        return ETCD_LANE
    if event.kind in (
        "deliver",
        "check",
        "apply",
        "storage-kill",
        "storage-start",
        "hold",
        "unhold",
    ):
        return STORE_LANE
    return f"W{event.worker}" if event.worker else ETCD_LANE


MARKS: Final = {
    "grant": ("diamond", "#444444"),
    "revoked": ("x", "#444444"),
    "send": ("triangle-right", None),
    "release": ("square", None),
    "lease-check": ("hourglass", None),
    "storage-kill": ("bowtie", "#c62828"),
    "storage-start": ("bowtie-open", "#17becf"),
    "error": ("circle-x", "#c62828"),
}
"""Marker symbol and colour of each non-decision event (None: the worker's colour)."""


def _label(event: Happening) -> str:
    """The short text by a marker."""
    if event.kind == "grant":
        return f"W{event.worker}: tok {event.get('token')}"
    if event.kind == "storage-kill":
        return "store killed"
    return ""


def _markers(report: LabReport, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """One marker trace for the etcd and worker events, one per decision outcome."""
    violations = _violations_by_event(report)
    plain = [e for e in report.line.events if e.kind in MARKS]
    traces = [
        {
            "type": "scatter",
            "name": "grant / send / release",
            "mode": "markers+text",
            "x": [e.t for e in plain],
            "y": [lane_y[_lane_of(e)] for e in plain],
            "text": [_label(e) for e in plain],
            "textposition": "top center",
            "textfont": {"size": 10},
            "hovertext": [describe(e, report.history.settings.lock_service) for e in plain],
            "hovertemplate": "%{x:.3f} s: %{hovertext}<extra></extra>",
            "marker": {
                "size": 11,
                "symbol": [MARKS[e.kind][0] for e in plain],
                "color": [MARKS[e.kind][1] or actor_colour(f"W{e.worker}") for e in plain],
                "line": {"width": 1},
            },
            "cliponaxis": False,
        }
    ]
    decisions = [e for e in report.line.events if e.kind in ("deliver", "check", "apply")]
    for look in (ACCEPTED, VIOLATING, REJECTED, READ, CHECKED):
        chosen = [e for e in decisions if outcome_of(e, e.index in violations) == look]
        if not chosen:
            continue
        traces.append(
            {
                "type": "scatter",
                "name": f"{look.glyph} {look.word}",
                "mode": "markers",
                "x": [e.t for e in chosen],
                "y": [lane_y[STORE_LANE]] * len(chosen),
                "hovertext": [
                    "<br>".join(
                        [
                            describe(e, report.history.settings.lock_service),
                            *violations.get(e.index, []),
                        ]
                    )
                    for e in chosen
                ],
                "hovertemplate": "%{x:.3f} s: %{hovertext}<extra></extra>",
                "marker": {"size": 14, "symbol": look.symbol, "color": look.colour},
                "cliponaxis": False,
            }
        )
    return traces


def _arrows(report: LabReport, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """Each request from its send to the store's first decision on it, one trace per colour."""
    violations = _violations_by_event(report)
    first: dict[str, Happening] = {}
    for event in report.line.events:
        if event.kind in ("deliver", "check", "apply") and event.get("request") not in first:
            first[str(event.get("request"))] = event
    by_colour: dict[str, tuple[list[Any], list[Any]]] = {}
    for send in (e for e in report.line.events if e.kind == "send"):
        decision = first.get(str(send.get("request")))
        if decision is None:
            continue
        look = outcome_of(decision, decision.index in violations) or ACCEPTED
        xs, ys = by_colour.setdefault(look.colour, ([], []))
        xs += [send.t, decision.t, None]
        ys += [lane_y[f"W{send.worker}"], lane_y[STORE_LANE], None]
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


def _bars(report: LabReport, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """Leases per worker (current, then held past their end), pauses and holds."""
    live, past = lease_boxes(report)
    traces: list[dict[str, Any]] = []
    for w in range(1, report.history.settings.workers + 1):
        colour = actor_colour(f"W{w}")
        for boxes, opacity, dash, name in (
            (live, ACTIVE_LEASE_OPACITY, "solid", "lease"),
            (past, PAUSED_LEASE_OPACITY, "dot", "holds token past its lease"),
        ):
            mine = [box for box in boxes if box[0] == f"W{w}"]
            if not mine:
                continue
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
    for boxes, name in (
        (spans(report, "pause", "resume", "W{w}"), "paused (SIGSTOP → SIGCONT)"),
        (spans(report, "hold", "unhold", STORE_LANE), "request held in flight"),
    ):
        if not boxes:
            continue
        traces.append(
            {
                "type": "scatter",
                "name": name,
                "mode": "lines",
                "fill": "toself",
                "fillcolor": "rgba(0,0,0,0.05)",
                "fillpattern": {"shape": "/", "fgcolor": "#555555", "size": 7},
                "line": {"color": "#555555", "width": 1},
                "hoverinfo": "skip",
                **_rectangles(boxes, lane_y, PAUSE_BAR),
            }
        )
    return traces


def history_figure(report: LabReport, title: str = "") -> go.Figure:
    """The real history as a swimlane figure with seconds on the x axis."""
    lane_y = lanes(report)
    data = [*_bars(report, lane_y), *_arrows(report, lane_y), *_markers(report, lane_y)]
    end = _end(report)
    layout = {
        "height": 150 + 62 * len(lane_y),
        "margin": {"l": 70, "r": 20, "t": 80, "b": 50},
        "title": {"text": title, "font": {"size": 15}, "y": 0.98, "yanchor": "top"},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "plot_bgcolor": "white",
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "font": {"size": 11}},
        "xaxis": {
            "title": {"text": "time (seconds since the run started)"},
            "range": [0, end * 1.03 + 0.05],
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
