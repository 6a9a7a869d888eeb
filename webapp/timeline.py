"""The swimlane timeline: one lane per actor, the clock as x axis, one frame per step.

`timeline_figure(trace, upto)` draws the first `upto` steps of a replayed trace (all by
default) and, unless `animate=False`, adds one animation frame per step with Play/Pause
buttons and a slider, so the same figure can be stepped by the page or played in the
browser. Everything is drawn by a fixed, short list of scatter traces: lease bars are
filled polygons (one trace per worker and lease style, rectangles separated by None) with
one text trace for their labels, message arrows are one line trace per outcome colour
with arrowhead markers (and one invisible trace for their hover text), and the step
markers carry the model's sentence as hover text.

The figure and every frame have the same traces in the same order. A marker trace holds
the points of the whole run, with x and y set to None for steps not yet taken, so its
per-point symbols, colours and words never change; a frame therefore only carries each
trace's `x` and `y`, plus `text` or `hovertext` where those change (plotly.js merges a
frame into the figure's traces, keeping their style). That keeps a 60-step figure cheap
to build, as plotly validates every frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, NamedTuple

import plotly.graph_objects as go

from model.trace import Trace
from webapp.events import (
    LEASE_ACTIVE,
    LEASE_PAST,
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
ARROW_HEAD_SIZE: Final = 15
ARROW_STANDOFF: Final = 9
"""Pixels between an arrowhead's tip and the reception marker it points at."""
LABEL_COLOUR: Final = "rgba(40, 40, 40, 0.75)"
GREY: Final = "#777777"
MOVING_KEYS: Final = ("x", "y", "text", "hovertext")
"""The only keys of a trace that may change from frame to frame (the rest is style)."""
ACTION_SYMBOLS: Final = {
    "Acquire": "diamond",
    "Send": "triangle-right",
    "Release": "square",
    "CoordinatorRestart": "bowtie",
    "StorageRestart": "bowtie",
    "Tick": "line-ns-open",
}
"""Marker of each non-reception action (receptions use the outcome symbols of `style`)."""


class LeaseLook(NamedTuple):
    """How the bars of one lease status look, and their shared legend entry."""

    legend: str
    legend_symbol: str
    opacity: float
    outline_width: float
    outline_dash: str
    label: str
    """The words in each bar; `{grant}` is replaced by the grant number."""


LEASE_LOOKS: Final = {
    LEASE_ACTIVE: LeaseLook(
        "lease, current", "square", ACTIVE_LEASE_OPACITY, 1.0, "solid", "lease #{grant}"
    ),
    LEASE_PAST: LeaseLook(
        "holds token past its lease",
        "square-open",
        PAUSED_LEASE_OPACITY,
        2.0,
        "dot",
        "past its lease",
    ),
}
"""Current leases solid, tokens held past their lease faint with a dotted outline."""


@dataclass(frozen=True)
class Frame:
    """What one moment of the animation shows: every trace, in the figure's fixed order."""

    data: tuple[dict[str, Any], ...]


def hover_text(event: Event) -> str:
    """The hover label of a step: number, time, the model's sentence, and any violation."""
    lines = [f"Step {event.step.number} (t={event.time}): {event.step.sentence}"]
    lines.extend(reason.text for reason in event.step.reasons)
    return "<br>".join(lines)


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


@lru_cache(maxsize=16)
def _words(trace: Trace) -> tuple[tuple[str, str], ...]:
    """Per step, its marker's short label and its hover text (worded once per trace)."""
    return tuple((_label(event), hover_text(event)) for event in events(trace))


def _scalar(key: str, value: object) -> object:
    """A style value for a trace with no points: the first of a list, or a plain default."""
    if not isinstance(value, list):
        return value
    return value[0] if value else {"symbol": "circle"}.get(key, GREY)


def _marker_trace(
    name: str,
    chosen: Sequence[Event],
    count: int,
    every_word: Sequence[tuple[str, str]],
    lane_y: dict[str, float],
    **marker: Any,
) -> dict[str, Any]:
    """Markers for `chosen` (whole trace), those after step `count` hidden by a None x and y.

    `every_word` holds each step's label and hover text, as `_words` gives them.
    """
    if not chosen:
        marker = {key: _scalar(key, value) for key, value in marker.items()}
    words = [every_word[e.step.number - 1] for e in chosen]
    shown = [e for e in chosen if e.step.number <= count]
    hidden: list[float | None] = [None] * (len(chosen) - len(shown))
    return {
        "type": "scatter",
        "name": name,
        "x": [e.x for e in shown] + hidden or [None],
        "y": [lane_y[e.lane] for e in shown] + hidden or [None],
        "mode": "markers+text",
        "text": [label for label, _ in words] or [""],
        "textposition": "top center",
        "textfont": {"size": 10},
        "hovertext": [hover for _, hover in words] or [""],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {"size": 13, "line": {"width": 1.5}, **marker},
        "cliponaxis": False,
    }


def _count(trace: Trace, upto: int | None) -> int:
    """How many steps are shown: all, or `upto` clamped to the trace."""
    return len(trace.steps) if upto is None else max(0, min(upto, len(trace.steps)))


def _marker_traces(
    trace: Trace, upto: int | None, lane_y: dict[str, float]
) -> tuple[dict[str, Any], ...]:
    """Step markers: actions, clock ticks, one trace per outcome, and the current-step ring."""
    every, words = events(trace), _words(trace)
    count = _count(trace, upto)
    actions = [e for e in every if e.outcome is None and e.lane != "clock"]
    ticks = [e for e in every if e.lane == "clock"]
    found = [
        _marker_trace(
            "grant / send / release",
            actions,
            count,
            words,
            lane_y,
            symbol=[ACTION_SYMBOLS.get(e.step.action.name, "circle") for e in actions],
            color=[
                actor_colour(f"W{e.worker}") if e.worker else actor_colour(e.lane) for e in actions
            ],
        ),
        _marker_trace(
            "clock tick", ticks, count, words, lane_y, symbol="line-ns-open", color=GREY, size=16
        ),
    ]
    used = {e.outcome for e in every if e.outcome is not None} | {ACCEPTED, REJECTED}
    for outcome in (o for o in OUTCOMES if o in used):
        found.append(
            _marker_trace(
                f"{outcome.glyph} {outcome.word}",
                [e for e in every if e.outcome == outcome],
                count,
                words,
                lane_y,
                symbol=outcome.symbol,
                color=outcome.colour,
                size=16,
            )
        )
    found.append(_ring(every[count - 1] if upto is not None and count else None, lane_y))
    return tuple(found)


def _ring(current: Event | None, lane_y: dict[str, float]) -> dict[str, Any]:
    """The ring around the step being narrated (no point when the whole run is shown)."""
    return {
        "type": "scatter",
        "name": "current step",
        "x": [current.x if current else None],
        "y": [lane_y[current.lane] if current else None],
        "mode": "markers",
        "hovertext": [hover_text(current) if current else ""],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": "circle-open",
            "size": 30,
            "color": CURRENT_STEP_COLOUR,
            "line": {"width": 3, "color": CURRENT_STEP_COLOUR},
        },
        "cliponaxis": False,
    }


def _lease_legend(status: str) -> dict[str, Any]:
    """A grey legend entry with no points for the bars of one lease status (their group)."""
    look = LEASE_LOOKS[status]
    opacity = look.opacity if look.legend_symbol == "square" else 1.0  # keep an outline visible
    return {
        "type": "scatter",
        "name": look.legend,
        "legendgroup": f"lease-{status}",
        "x": [None],
        "y": [None],
        "mode": "markers",
        "marker": {"symbol": look.legend_symbol, "size": 14, "color": GREY, "opacity": opacity},
        "hoverinfo": "skip",
    }


def _rectangles(
    segments: Sequence[Segment], lane_y: dict[str, float]
) -> tuple[list[float | None], list[float | None]]:
    """Closed rectangle outlines of the bars, separated by None (one polygon each)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for segment in segments:
        middle = lane_y[f"W{segment.worker}"]
        low, high = middle - BAR_HALF_HEIGHT, middle + BAR_HALF_HEIGHT
        xs += [segment.start, segment.end, segment.end, segment.start, segment.start, None]
        ys += [low, low, high, high, low, None]
    return xs or [None], ys or [None]


def _lease_traces(
    trace: Trace, upto: int | None, lane_y: dict[str, float]
) -> tuple[dict[str, Any], ...]:
    """Lease bars: per status and worker one filled polygon trace, then one label trace."""
    segments = lease_segments(trace, upto)
    found = []
    for status, look in LEASE_LOOKS.items():
        for w in range(1, trace.bounds.workers + 1):
            colour = actor_colour(f"W{w}")
            xs, ys = _rectangles(
                [s for s in segments if s.worker == w and s.status == status], lane_y
            )
            found.append(
                {
                    "type": "scatter",
                    "name": f"W{w} {status} lease",
                    "legendgroup": f"lease-{status}",
                    "showlegend": False,
                    "x": xs,
                    "y": ys,
                    "mode": "lines",
                    "fill": "toself",
                    "fillcolor": colour,
                    "opacity": look.opacity,
                    "line": {
                        "color": colour,
                        "width": look.outline_width,
                        "dash": look.outline_dash,
                    },
                    "hoverinfo": "skip",
                }
            )
    found.append(_lease_labels(segments, lane_y))
    return tuple(found)


def _lease_labels(segments: Sequence[Segment], lane_y: dict[str, float]) -> dict[str, Any]:
    """The words in the middle of each lease bar: its grant number, or `past its lease`."""
    return {
        "type": "scatter",
        "name": "lease labels",
        "showlegend": False,
        "x": [(s.start + s.end) / 2 for s in segments] or [None],
        "y": [lane_y[f"W{s.worker}"] for s in segments] or [None],
        "text": [LEASE_LOOKS[s.status].label.format(grant=s.grant) for s in segments] or [""],
        "mode": "text",
        "textfont": {"size": 10, "color": LABEL_COLOUR},
        "hoverinfo": "skip",
        "cliponaxis": False,
    }


def _arrow_kinds(sent: Sequence[Message]) -> list[tuple[str, bool]]:
    """The (colour, is read) pairs of these arrows, in outcome order: one arrow trace each."""
    present = {(m.outcome.colour, m.is_read) for m in sent}
    kinds: list[tuple[str, bool]] = []
    for outcome in OUTCOMES:
        for kind in ((outcome.colour, False), (outcome.colour, True)):
            if kind in present and kind not in kinds:
                kinds.append(kind)
    return kinds


def _arrow_hover(message: Message) -> str:
    """What hovering an arrow says: whose request, which token, and what became of it."""
    kind = "read" if message.is_read else "write"
    return f"W{message.worker}'s {kind} carrying token {message.token}: {message.outcome.word}"


def _arrow_trace(
    kind: tuple[str, bool], sent: Sequence[Message], total: int, lane_y: dict[str, float]
) -> dict[str, Any]:
    """Arrows of one colour and weight: tail, head, then a None gap (no hover of their own).

    The head sizes cover all `total` arrows of this kind in the whole trace, so they stay
    in the figure's style while the frames add arrows one by one.
    """
    colour, read = kind
    xs: list[float | None] = []
    ys: list[float | None] = []
    for message in sent:
        xs += [message.sent_x, message.received_x, None]
        ys += [lane_y[f"W{message.worker}"], lane_y["receiver"], None]
    return {
        "type": "scatter",
        "name": "read arrows" if read else "write arrows",
        "showlegend": False,
        "x": xs or [None],
        "y": ys or [None],
        "mode": "lines+markers",
        # plotly.js backs each line off from its arrowhead by default (line.backoff "auto")
        "line": {"color": colour, "width": 1.2 if read else 2.0},
        "marker": {
            "symbol": "arrow",
            "angleref": "previous",
            "standoff": ARROW_STANDOFF,
            "color": colour,
            "size": [0, ARROW_HEAD_SIZE, 0] * max(1, total),
            # a size list would otherwise make plotly.js draw faint, white-rimmed bubbles
            "opacity": 1,
            "line": {"width": 0},
        },
        "hoverinfo": "skip",
        "cliponaxis": False,
    }


def _arrow_hover_trace(
    everything: Sequence[Message], count: int, lane_y: dict[str, float]
) -> dict[str, Any]:
    """Invisible points in the middle of every arrow that say what it carried, on hover.

    Hover sits only mid-arrow: at its ends it would outbid the step markers beneath (plotly
    prefers the smaller of two markers under the pointer). `count` arrows are shown.
    """
    shown = everything[:count]
    hidden: list[float | None] = [None] * (len(everything) - count)
    return {
        "type": "scatter",
        "name": "arrow hover",
        "showlegend": False,
        "x": [(m.sent_x + m.received_x) / 2 for m in shown] + hidden or [None],
        "y": [(lane_y[f"W{m.worker}"] + lane_y["receiver"]) / 2 for m in shown] + hidden or [None],
        "hovertext": [_arrow_hover(m) for m in everything] or [""],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "hoverlabel": {"bgcolor": [m.outcome.colour for m in everything] or GREY},
        "mode": "markers",
        "marker": {"size": 0, "opacity": 0},
    }


def _of_kind(sent: Sequence[Message], kind: tuple[str, bool]) -> list[Message]:
    """The messages whose arrow has this (colour, is read) kind."""
    return [m for m in sent if (m.outcome.colour, m.is_read) == kind]


@lru_cache(maxsize=16)
def _messages_received(trace: Trace) -> tuple[tuple[Message, ...], tuple[int, ...]]:
    """Every message of the whole trace, and the number of the step that received each.

    The messages of the first k steps are those received by step k (`messages(trace, k)`).
    """
    everything = messages(trace)
    step_at = {event.x: event.step.number for event in events(trace)}
    return everything, tuple(step_at[m.received_x] for m in everything)


def _arrow_traces(
    trace: Trace, upto: int | None, lane_y: dict[str, float]
) -> tuple[dict[str, Any], ...]:
    """One arrow trace per (outcome colour, read or write) the whole trace shows, and hover."""
    everything, received = _messages_received(trace)
    count = _count(trace, upto)
    sent = [m for m, step in zip(everything, received, strict=True) if step <= count]
    return (
        *(
            _arrow_trace(kind, _of_kind(sent, kind), len(_of_kind(everything, kind)), lane_y)
            for kind in _arrow_kinds(everything)
        ),
        _arrow_hover_trace(everything, len(sent), lane_y),
    )


def frame_at(trace: Trace, upto: int | None) -> Frame:
    """Everything drawn after `upto` steps (all steps when None), trace order fixed per trace."""
    lane_y = lane_names_y(trace)
    return Frame(
        data=(
            *_lease_traces(trace, upto, lane_y),
            *_arrow_traces(trace, upto, lane_y),
            *_marker_traces(trace, upto, lane_y),
            *(_lease_legend(status) for status in LEASE_LOOKS),
        )
    )


def _moving_keys(frames: Sequence[Frame]) -> list[tuple[str, ...]]:
    """Per trace, the keys its frames carry: x and y, plus text or hover text that changes."""
    first = frames[0].data
    return [
        tuple(
            key
            for key in MOVING_KEYS
            if key in data
            and (key in ("x", "y") or any(frame.data[i][key] != data[key] for frame in frames))
        )
        for i, data in enumerate(first)
    ]


def _frame_dicts(trace: Trace) -> list[dict[str, Any]]:
    """One plotly frame per step count 0..all, each trace cut down to its moving keys."""
    frames = [frame_at(trace, k) for k in range(len(trace.steps) + 1)]
    keys = _moving_keys(frames)
    return [
        {
            "name": str(k),
            "data": [
                {"type": data["type"], **{key: data[key] for key in moving}}
                for data, moving in zip(frame.data, keys, strict=True)
            ],
        }
        for k, frame in enumerate(frames)
    ]


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


def _layout(trace: Trace, lane_y: dict[str, float], animate: bool) -> dict[str, Any]:
    """Axes, lanes, title and legend (room for the controls below only when animated)."""
    left, right = x_extent(trace)
    ticks = time_ticks(trace)
    return {
        "height": (170 if animate else 155) + 62 * len(lane_y),
        "margin": {"l": 90, "r": 20, "t": 95, "b": 110 if animate else 50},
        "title": {
            "text": trace.title or trace.design.label(),
            "font": {"size": 15},
            "y": 0.98,
            "yanchor": "top",
        },
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "plot_bgcolor": "white",
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "font": {"size": 11}},
        "showlegend": True,
        "xaxis": {
            "title": {"text": "time (ticks)"},
            "range": [left, right],
            "tickvals": ticks[0],
            "ticktext": ticks[1],
            "showgrid": True,
            "gridcolor": "#dddddd",
            "zeroline": False,
        },
        "yaxis": {
            "tickvals": list(lane_y.values()),
            "ticktext": [f"<b>{name}</b>" for name in lane_y],
            "range": [CLOCK_Y - 0.4, max(lane_y.values()) + 0.6],
            "showgrid": True,
            "gridcolor": "#f0f0f0",
            "zeroline": False,
            "fixedrange": True,
        },
    }


def timeline_figure(trace: Trace, upto: int | None = None, animate: bool = True) -> go.Figure:
    """A swimlane figure of the trace's first `upto` steps.

    With `animate`, it also has one frame per step (0..all) and Play/Pause and a slider;
    without, it is the one picture, as cheap as a figure of its size can be.
    """
    lane_y = lane_names_y(trace)
    layout = _layout(trace, lane_y, animate)
    figure: dict[str, Any] = {"data": list(frame_at(trace, upto).data), "layout": layout}
    if animate:
        count = len(trace.steps)
        layout.update(_animation_controls(count, count if upto is None else min(upto, count)))
        figure["frames"] = _frame_dicts(trace)
    # Every part is built from this module's own constants, so plotly's per-attribute
    # validation of the data and layout is skipped (frames are always validated, which is
    # why they carry only points and words).
    return go.Figure(figure, _validate=False)
