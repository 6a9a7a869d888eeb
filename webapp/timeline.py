"""The swimlane timeline: one lane per actor, the clock as x axis, one frame per step.

`timeline_figure(trace, upto)` draws the first `upto` steps of a replayed trace (all by
default) and adds one animation frame per step with Play/Pause buttons and a slider, so
the same figure can be stepped by the page or played in the browser. Lease bars are
shapes and message arrows annotations, each list built at once; the step markers are a
handful of scatter traces whose hover text is the model's sentence for the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import plotly.graph_objects as go

from model.trace import Trace
from webapp.events import (
    LEASE_ACTIVE,
    Event,
    Message,
    Segment,
    events,
    lane_names_y,
    lease_segments,
    messages,
    time_ticks,
    x_extent,
)
from webapp.style import (
    ACCEPTED,
    ACTIVE_LEASE_OPACITY,
    CURRENT_STEP_COLOUR,
    OUTCOMES,
    PAUSED_LEASE_OPACITY,
    REJECTED,
    actor_colour,
)

FRAME_MS: Final = 800
BAR_HALF_HEIGHT: Final = 0.22
CLOCK_Y: Final = -0.8
ACTION_SYMBOLS: Final = {
    "Acquire": "diamond",
    "Send": "triangle-right",
    "Release": "square",
    "CoordinatorRestart": "bowtie",
    "StorageRestart": "bowtie",
    "Tick": "line-ns-open",
}
"""Marker of each non-reception action (receptions use the outcome symbols of `style`)."""


@dataclass(frozen=True)
class Frame:
    """What one moment of the animation shows: marker traces, lease shapes, arrows."""

    data: tuple[dict[str, Any], ...]
    shapes: tuple[dict[str, Any], ...]
    annotations: tuple[dict[str, Any], ...]


def hover_text(event: Event) -> str:
    """The hover label of a step: number, time, the model's sentence, and any violation."""
    lines = [f"Step {event.step.number} (t={event.time}): {event.step.sentence}"]
    lines.extend(event.step.reasons)
    return "<br>".join(lines)


def _marker_trace(
    name: str, chosen: list[Event], lane_y: dict[str, float], **marker: Any
) -> dict[str, Any]:
    """One scatter trace of step markers with the step sentence as hover text."""
    if not chosen:
        return _legend_only(
            name, marker.get("symbol", "circle"), 1.0, marker.get("color", "#777777")
        )
    return {
        "type": "scatter",
        "name": name,
        "x": [e.x for e in chosen],
        "y": [lane_y[e.lane] for e in chosen],
        "mode": "markers+text",
        "text": [_label(e) for e in chosen],
        "textposition": "top center",
        "textfont": {"size": 10},
        "hovertext": [hover_text(e) for e in chosen],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {"size": 13, "line": {"width": 1.5}, **marker},
        "cliponaxis": False,
    }


def _label(event: Event) -> str:
    """Short text next to a marker: the token carried or granted, and the outcome glyph."""
    name = event.step.action.name
    if name == "Acquire":
        return f"W{event.worker}: tok {event.token}"
    if event.outcome is not None:
        return f"{event.outcome.glyph} {event.token}"
    if name == "Send":
        return f"tok {event.token}"
    return ""


def _traces(trace: Trace, upto: int | None, lane_y: dict[str, float]) -> tuple[dict[str, Any], ...]:
    """The fixed list of marker traces (same order and count in every frame)."""
    shown = events(trace, upto)
    actions = [e for e in shown if e.outcome is None and e.lane != "clock"]
    ticks = [e for e in shown if e.lane == "clock"]
    found = [
        _marker_trace(
            "grant / send / release",
            actions,
            lane_y,
            symbol=[ACTION_SYMBOLS.get(e.step.action.name, "circle") for e in actions],
            color=[
                actor_colour(f"W{e.worker}") if e.worker else actor_colour(e.lane) for e in actions
            ],
        ),
        _marker_trace("clock tick", ticks, lane_y, symbol="line-ns-open", color="#777777", size=16),
    ]
    used = {e.outcome for e in events(trace) if e.outcome is not None} | {ACCEPTED, REJECTED}
    for outcome in (o for o in OUTCOMES if o in used):
        chosen = [e for e in shown if e.outcome == outcome]
        found.append(
            _marker_trace(
                f"{outcome.glyph} {outcome.word}",
                chosen,
                lane_y,
                symbol=outcome.symbol,
                color=outcome.colour,
                size=16,
            )
        )
    current = shown[-1:] if upto is not None else []
    ring = _marker_trace(
        "current step",
        list(current),
        lane_y,
        symbol="circle-open",
        color=CURRENT_STEP_COLOUR,
        size=30,
    )
    if current:
        ring["text"] = [""]
        ring["marker"]["line"] = {"width": 3, "color": CURRENT_STEP_COLOUR}
    found.append(ring)
    found.append(_legend_only("lease, current", "square", ACTIVE_LEASE_OPACITY))
    found.append(_legend_only("holds token past its lease", "square-open", 1.0))
    return tuple(found)


def _legend_only(
    name: str, symbol: object, opacity: float, colour: object = "#777777"
) -> dict[str, Any]:
    """A trace with no points that keeps its legend entry (so the legend never jumps)."""
    if isinstance(symbol, list):
        symbol = symbol[0] if symbol else "circle"
    if isinstance(colour, list):
        colour = colour[0] if colour else "#777777"
    return {
        "type": "scatter",
        "name": name,
        "x": [None],
        "y": [None],
        "mode": "markers",
        "marker": {"symbol": symbol, "size": 14, "color": colour, "opacity": opacity},
        "hoverinfo": "skip",
    }


def _shapes(segments: tuple[Segment, ...], lane_y: dict[str, float]) -> tuple[dict[str, Any], ...]:
    """Lease bars: solid while current, faint with a dashed outline once past the lease."""
    shapes = []
    for segment in segments:
        lane = f"W{segment.worker}"
        colour = actor_colour(lane)
        active = segment.status == LEASE_ACTIVE
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "y",
                "x0": segment.start,
                "x1": segment.end,
                "y0": lane_y[lane] - BAR_HALF_HEIGHT,
                "y1": lane_y[lane] + BAR_HALF_HEIGHT,
                "fillcolor": colour,
                "opacity": ACTIVE_LEASE_OPACITY if active else PAUSED_LEASE_OPACITY,
                "line": {
                    "color": colour,
                    "width": 1 if active else 2,
                    "dash": "solid" if active else "dot",
                },
                "layer": "below",
                "label": {
                    "text": f"lease #{segment.grant}" if active else "past its lease",
                    "font": {"size": 10},
                    "textposition": "middle center",
                },
            }
        )
    return tuple(shapes)


def _arrows(sent: tuple[Message, ...], lane_y: dict[str, float]) -> tuple[dict[str, Any], ...]:
    """One arrow per delivered request, from the sender's lane to the receiver's."""
    return tuple(
        {
            "x": message.received_x,
            "y": lane_y["receiver"],
            "ax": message.sent_x,
            "ay": lane_y[f"W{message.worker}"],
            "xref": "x",
            "yref": "y",
            "axref": "x",
            "ayref": "y",
            "showarrow": True,
            "arrowhead": 2,
            "arrowsize": 1.2,
            "arrowwidth": 1.2 if message.is_read else 2,
            "arrowcolor": message.outcome.colour,
            "standoff": 9,
            "startstandoff": 7,
            "text": "",
            "hovertext": f"W{message.worker}'s {'read' if message.is_read else 'write'} "
            f"carrying token {message.token}: {message.outcome.word}",
        }
        for message in sent
    )


def frame_at(trace: Trace, upto: int | None) -> Frame:
    """Everything drawn after `upto` steps (all steps when None)."""
    lane_y = lane_names_y(trace)
    return Frame(
        data=_traces(trace, upto, lane_y),
        shapes=_shapes(lease_segments(trace, upto), lane_y),
        annotations=_arrows(messages(trace, upto), lane_y),
    )


def _animation_controls(count: int, active: int) -> dict[str, Any]:
    """Play/Pause buttons and a step slider over the frames 0..count."""
    play = {
        "frame": {"duration": FRAME_MS, "redraw": True},
        "fromcurrent": True,
        "transition": {"duration": 0},
    }
    pause = {
        "frame": {"duration": 0, "redraw": True},
        "mode": "immediate",
        "transition": {"duration": 0},
    }
    return {
        "updatemenus": [
            {
                "type": "buttons",
                "direction": "left",
                "x": 0.0,
                "y": -0.12,
                "xanchor": "left",
                "yanchor": "top",
                "showactive": False,
                "buttons": [
                    {"label": "▶ Play", "method": "animate", "args": [None, play]},
                    {"label": "❚❚ Pause", "method": "animate", "args": [[None], pause]},
                ],
            }
        ],
        "sliders": [
            {
                "active": active,
                "x": 0.24,
                "y": -0.08,
                "len": 0.76,
                "xanchor": "left",
                "yanchor": "top",
                "currentvalue": {"prefix": "steps shown: "},
                "steps": [
                    {"label": str(k), "method": "animate", "args": [[str(k)], pause]}
                    for k in range(count + 1)
                ],
            }
        ],
    }


def timeline_figure(trace: Trace, upto: int | None = None) -> go.Figure:
    """A swimlane figure of the trace's first `upto` steps, with one animation frame per step."""
    lane_y = lane_names_y(trace)
    count = len(trace.steps)
    shown = frame_at(trace, upto)
    frames = [frame_at(trace, k) for k in range(count + 1)]
    left, right = x_extent(trace)
    ticks = time_ticks(trace)
    layout = dict(
        shapes=list(shown.shapes),
        annotations=list(shown.annotations),
        height=170 + 62 * len(lane_y),
        margin={"l": 90, "r": 20, "t": 95, "b": 110},
        title={
            "text": trace.title or trace.design.label(),
            "font": {"size": 15},
            "y": 0.98,
            "yanchor": "top",
        },
        hovermode="closest",
        hoverlabel={"align": "left"},
        plot_bgcolor="white",
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "font": {"size": 11}},
        showlegend=True,
        xaxis={
            "title": {"text": "time (ticks)"},
            "range": [left, right],
            "tickvals": ticks[0],
            "ticktext": ticks[1],
            "showgrid": True,
            "gridcolor": "#dddddd",
            "zeroline": False,
        },
        yaxis={
            "tickvals": list(lane_y.values()),
            "ticktext": [f"<b>{name}</b>" for name in lane_y],
            "range": [CLOCK_Y - 0.4, max(lane_y.values()) + 0.6],
            "showgrid": True,
            "gridcolor": "#f0f0f0",
            "zeroline": False,
            "fixedrange": True,
        },
        **_animation_controls(count, count if upto is None else min(upto, count)),
    )
    frame_dicts = [
        {
            "name": str(k),
            "data": list(frame.data),
            "layout": {"shapes": list(frame.shapes), "annotations": list(frame.annotations)},
        }
        for k, frame in enumerate(frames)
    ]
    # Every part is built from this module's own constants, so plotly's per-attribute
    # validation (most of the build time for long traces) is skipped.
    return go.Figure(
        {"data": list(shown.data), "layout": layout, "frames": frame_dicts}, _validate=False
    )
