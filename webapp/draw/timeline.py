"""The swimlane timeline: one lane per actor, time as the x axis, one picture per step.

`timeline_figure(trace, upto)` draws what is known after the first `upto` steps of a
replayed trace (the whole run when None). The page's step player draws one such figure per
step, so the figure, the narration and the state table always show the same step; the
figure has no animation frames or controls of its own.

Tick `t` is the band from x = t to t + 1, labelled `t=<t>`; every step sits inside the band
of the tick it happens in (see `webapp.show.events`). Lease bars are filled rectangles (one
polygon trace per worker and lease status), requests travel in the network just below
their worker's lane (dashed) and drop to the receiver when it handles them (an arrow
coloured by the outcome), a paused worker's lane carries a dotted line, a crashed worker's
lane a solid dark line from its crash on (it takes no step again), and the gap is a
shaded, labelled stretch of time across every lane. The legend is one entry per meaning,
the same for every step of a run, each with the symbol or line the figure draws for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import plotly.graph_objects as go

from model.actions import ACTION_ROWS, ActionKind
from model.trace import Trace
from webapp.show.events import (
    LEASE_ACTIVE,
    LEASE_PAST,
    Crashed,
    Event,
    Gap,
    Message,
    Pause,
    Segment,
    crashes,
    current_x,
    events,
    gaps,
    lane_names_y,
    lease_segments,
    messages,
    pauses,
    time_ticks,
    x_extent,
)
from webapp.show.style import (
    ACTIVE_LEASE_OPACITY,
    BAND_FILL,
    CRASHED_COLOUR,
    CURRENT_STEP_COLOUR,
    FUTURE_FILL,
    GAP_COLOUR,
    GAP_FILL,
    OUTCOMES,
    PAUSE_COLOUR,
    PAUSED_LEASE_OPACITY,
    Outcome,
    actor_colour,
)

BAR_HALF_HEIGHT: Final = 0.22
NETWORK_OFFSET: Final = 0.4
"""How far below its worker's lane a request travels while it is in the network."""
CLOCK_Y: Final = -0.8
GAP_LABEL_ROOM: Final = 1.4
"""Extra room above the top lane for the gap's label, in lane units."""
ARROW_HEAD_SIZE: Final = 15
ARROW_STANDOFF: Final = 9
"""Pixels between an arrowhead's tip and the reception marker it points at."""
LABEL_COLOUR: Final = "rgba(40, 40, 40, 0.8)"
LABEL_INSET: Final = 0.03
"""How far inside its bar a lease label starts, in ticks."""
GREY: Final = "#777777"
LEGEND_ENTRY_PX: Final = 80
"""Width of a legend entry: the legend is a grid below the plot, two columns on a phone."""
LEGEND_ROW_PX: Final = 26
TITLE_PX: Final = 62
LANE_PX: Final = 54
GAP_ROW_PX: Final = 50
AXIS_PX: Final = 58
"""Heights: the room under the plot is the axis, then the legend in two columns (a phone's
width), so the legend never covers the plot or the axis title at any width."""
GAP_LABEL: Final = "gap: old lease over, the receiver would still take its token"
GAP_LABEL_LINES: Final = "gap: old lease over,<br>the receiver would still take its token"


@dataclass(frozen=True)
class Look:
    """How one meaning is drawn: its legend name and its marker or line style."""

    name: str
    symbol: str = ""
    """Marker symbol (plotly name); empty for a meaning drawn as a line or an area."""
    dash: str = ""
    """Line dash for a meaning drawn as a line; empty otherwise."""
    colour: str = GREY
    size: int = 13


GRANT: Final = Look("grant", symbol="diamond")
SEND: Final = Look("send", symbol="triangle-right")
RELEASE: Final = Look("release", symbol="square")
RESTART: Final = Look("restart", symbol="bowtie")
TICK: Final = Look("clock tick", symbol="line-ns-open", size=16)
RENEWAL: Final = Look("renewal", symbol="triangle-up")
CRASH: Final = Look("crash", symbol="x", size=14)
CURRENT: Final = Look("current step", symbol="circle-open", colour=CURRENT_STEP_COLOUR, size=30)
LEASE: Final = Look("lease", symbol="square")
PAST_LEASE: Final = Look("past its lease", symbol="square-open")
PAUSED: Final = Look("paused", symbol="square", colour=PAUSE_COLOUR)
PAUSE_STYLE: Final = {
    "mode": "lines",
    "fill": "toself",
    "fillcolor": "rgba(0, 0, 0, 0)",
    "fillpattern": {"shape": "/", "fgcolor": PAUSE_COLOUR, "size": 7, "solidity": 0.25},
    "line": {"color": PAUSE_COLOUR, "width": 1.5, "dash": "dot"},
}
"""A paused stretch: a hatched, dotted-outlined rectangle over the worker's lane."""
IN_NETWORK: Final = Look("in the network", dash="dash")
CRASHED: Final = Look("crashed", dash="solid", colour=CRASHED_COLOUR)
"""A crashed worker's lane from its crash on: a solid dark line, never the pause's hatching."""
CRASHED_WIDTH: Final = 5
GAP: Final = Look("gap", symbol="square", colour=GAP_COLOUR)

STEP_LOOKS: Final = (GRANT, SEND, RELEASE, RESTART, RENEWAL, CRASH, TICK)
"""The markers of steps that are not receptions, in the legend's order; each action kind
names its own by `look` (model.actions.ACTION_ROWS)."""
ACTION_LOOKS: Final = {
    row.kind: next(look for look in STEP_LOOKS if look.name == row.look)
    for row in ACTION_ROWS
    if row.look is not None
}
"""The look of each action that is not a reception (receptions use the outcome's look)."""
LEASE_LOOKS: Final = {LEASE_ACTIVE: LEASE, LEASE_PAST: PAST_LEASE}
LEASE_STYLE: Final = {
    LEASE_ACTIVE: (ACTIVE_LEASE_OPACITY, 1.0, "solid"),
    LEASE_PAST: (PAUSED_LEASE_OPACITY, 2.0, "dot"),
}
"""(opacity, outline width, outline dash) of the bars of each lease status."""


def outcome_look(outcome: Outcome) -> Look:
    """The look of a reception: the outcome's glyph, name (`violating`), symbol and colour."""
    return Look(f"{outcome.glyph} {outcome.key}", symbol=outcome.symbol, colour=outcome.colour)


def hover_text(event: Event) -> str:
    """The hover label of a step: number, time, the model's sentence, and any violation."""
    lines = [f"Step {event.step.number} (t={event.time}): {event.step.sentence}"]
    lines.extend(reason.text for reason in event.step.reasons)
    return "<br>".join(lines)


def marker_label(event: Event) -> str:
    """Short text next to a marker: the token carried or granted, and the outcome glyph."""
    name = event.step.action.name
    if name is ActionKind.ACQUIRE:
        return f"W{event.worker}: tok {event.token}"
    if event.outcome is not None:
        return (
            f"{event.outcome.glyph} {event.token}" if event.carries_token else event.outcome.glyph
        )
    if name is ActionKind.SEND:
        return f"tok {event.token}" if event.carries_token else "no tok"
    return ""


def look_of(event: Event) -> Look:
    """The look of a step's marker."""
    if event.outcome is not None:
        return outcome_look(event.outcome)
    return ACTION_LOOKS.get(event.step.action.name, Look(event.step.action.name, "circle"))


def _marker_colour(event: Event, look: Look) -> str:
    """Outcomes and ticks in their own colour; grants, sends and releases in the worker's."""
    if event.outcome is not None or look is TICK:
        return look.colour
    return actor_colour(f"W{event.worker}" if event.worker else event.lane)


def _marker_trace(look: Look, shown: Sequence[Event], lane_y: dict[str, float]) -> dict[str, Any]:
    """The markers of one meaning, with their short labels and the model's sentence on hover."""
    return {
        "type": "scatter",
        "name": look.name,
        "legendgroup": look.name,
        "showlegend": False,
        "x": [e.x for e in shown],
        "y": [lane_y[e.lane] for e in shown],
        "mode": "markers+text",
        "text": [marker_label(e) for e in shown],
        "textposition": "top center",
        "textfont": {"size": 10},
        "hovertext": [hover_text(e) for e in shown],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": look.symbol,
            "size": look.size,
            "color": [_marker_colour(e, look) for e in shown],
            "line": {"width": 1.5},
        },
        "cliponaxis": False,
    }


def _looks_in_order(every: Sequence[Event]) -> list[Look]:
    """The marker looks the events use, each once: actions first, then outcomes in order."""
    looks: list[Look] = []
    for look in (*STEP_LOOKS, *map(outcome_look, OUTCOMES)):
        if look not in looks and any(look_of(e) == look for e in every):
            looks.append(look)
    return looks


def _marker_traces(
    trace: Trace, upto: int | None, lane_y: dict[str, float]
) -> list[dict[str, Any]]:
    """One marker trace per meaning shown so far, then the ring around the current step."""
    shown = events(trace, upto)
    found = [
        _marker_trace(look, [e for e in shown if look_of(e) == look], lane_y)
        for look in _looks_in_order(shown)
    ]
    if upto is not None and shown:
        found.append(_ring(shown[-1], lane_y))
    return found


def _ring(current: Event, lane_y: dict[str, float]) -> dict[str, Any]:
    """The ring around the step being narrated."""
    return {
        "type": "scatter",
        "name": CURRENT.name,
        "legendgroup": CURRENT.name,
        "showlegend": False,
        "x": [current.x],
        "y": [lane_y[current.lane]],
        "mode": "markers",
        "hovertext": [hover_text(current)],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": CURRENT.symbol,
            "size": CURRENT.size,
            "color": CURRENT.colour,
            "line": {"width": 3, "color": CURRENT.colour},
        },
        "cliponaxis": False,
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
    return xs, ys


def _lease_traces(trace: Trace, upto: int | None, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """Lease bars: per status and worker one filled polygon trace, then their labels."""
    segments = lease_segments(trace, upto)
    found = []
    for status, look in LEASE_LOOKS.items():
        opacity, width, dash = LEASE_STYLE[status]
        for w in sorted({s.worker for s in segments if s.status == status}):
            colour = actor_colour(f"W{w}")
            xs, ys = _rectangles(
                [s for s in segments if s.worker == w and s.status == status], lane_y
            )
            found.append(
                {
                    "type": "scatter",
                    "name": f"W{w} {look.name}",
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
    if segments:
        found.append(_lease_labels(segments, lane_y, x_extent(trace)[1]))
    return found


def lease_label(segment: Segment, right: float) -> str:
    """The words on a bar: its grant and, when it runs past the axis, where it ends."""
    if segment.status == LEASE_PAST:
        return "past its lease"
    if segment.end > right:
        return f"lease #{segment.grant} → t={segment.end:g}"
    return f"lease #{segment.grant}"


def _lease_labels(
    segments: Sequence[Segment], lane_y: dict[str, float], right: float
) -> dict[str, Any]:
    """The words at the start of each lease bar, inside it (a worker's own steps in that tick
    come after its grant, so they sit to the right of the words)."""
    return {
        "type": "scatter",
        "name": "lease labels",
        "showlegend": False,
        "x": [s.start + LABEL_INSET for s in segments],
        "y": [lane_y[f"W{s.worker}"] for s in segments],
        "text": [lease_label(s, right) for s in segments],
        "textposition": "middle right",
        "mode": "text",
        "textfont": {"size": 10, "color": LABEL_COLOUR},
        "hoverinfo": "skip",
        "cliponaxis": False,
    }


def _pause_traces(trace: Trace, upto: int | None, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """A hatched stretch of a paused worker's lane, labelled `paused` above it."""
    found = pauses(trace, upto)
    if not found:
        return []
    xs: list[float | None] = []
    ys: list[float | None] = []
    for pause in found:
        middle = lane_y[f"W{pause.worker}"]
        low, high = middle - BAR_HALF_HEIGHT, middle + BAR_HALF_HEIGHT
        xs += [pause.start, pause.end, pause.end, pause.start, pause.start, None]
        ys += [low, low, high, high, low, None]
    return [
        {
            "type": "scatter",
            "name": PAUSED.name,
            "legendgroup": PAUSED.name,
            "showlegend": False,
            "x": xs,
            "y": ys,
            **PAUSE_STYLE,
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "name": "pause labels",
            "legendgroup": PAUSED.name,
            "showlegend": False,
            "x": [(p.start + p.end) / 2 for p in found],
            "y": [lane_y[f"W{p.worker}"] + BAR_HALF_HEIGHT for p in found],
            "text": ["❚❚ paused" for _ in found],
            "textposition": "top center",
            "hovertext": [pause_hover(p) for p in found],
            "hovertemplate": "%{hovertext}<extra></extra>",
            "mode": "text",
            "textfont": {"size": 10, "color": PAUSED.colour},
            "cliponaxis": False,
        },
    ]


def pause_hover(pause: Pause) -> str:
    """What hovering a pause says: who, and while which ticks passed."""
    ticks = ", ".join(f"t={t}" for t in pause.ticks)
    return (
        f"W{pause.worker} is paused: it believes it holds the lock and could act, "
        f"but takes no step while time passes ({ticks})"
    )


def crash_hover(crash: Crashed) -> str:
    """What hovering a crashed lane says: who, since when, and that nobody is told."""
    return (
        f"W{crash.worker} crashed at t={crash.time} and takes no step again: no write, no "
        "release, no renewal. Nobody is told; to the coordinator it looks like a pause."
    )


def _crash_traces(trace: Trace, upto: int | None, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """A crashed worker's lane, ended: a solid dark line from the crash to now, labelled."""
    found = crashes(trace, upto)
    if not found:
        return []
    xs: list[float | None] = []
    ys: list[float | None] = []
    for crash in found:
        y = lane_y[f"W{crash.worker}"]
        xs += [crash.start, max(crash.end, crash.start), None]
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
        {
            "type": "scatter",
            "name": "crash labels",
            "legendgroup": CRASHED.name,
            "showlegend": False,
            "x": [c.start for c in found],
            "y": [lane_y[f"W{c.worker}"] + BAR_HALF_HEIGHT for c in found],
            "text": ["✖ crashed" for _ in found],
            "textposition": "top right",
            "hovertext": [crash_hover(c) for c in found],
            "hovertemplate": "%{hovertext}<extra></extra>",
            "mode": "text",
            "textfont": {"size": 10, "color": CRASHED.colour},
            "cliponaxis": False,
        },
    ]


def _kind(message: Message) -> str:
    """`read` or `write`."""
    return "read" if message.is_read else "write"


def message_hover(message: Message) -> str:
    """What hovering a request's path says: whose, which token, how long, what became of it."""
    head = (
        f"W{message.worker}'s {_kind(message)} carrying token {message.token}"
        if message.carries_token
        else f"W{message.worker}'s {_kind(message)}, without a token"
    )
    if message.outcome is None or message.received_time is None:
        return f"{head}, sent at t={message.sent_time}: still in the network"
    ticks = message.received_time - message.sent_time
    waited = f", {ticks} tick{'s' if ticks != 1 else ''} in the network" if ticks else ""
    return f"{head}, sent at t={message.sent_time}{waited}: {message.outcome.word}"


def _network_traces(
    trace: Trace, upto: int | None, lane_y: dict[str, float]
) -> list[dict[str, Any]]:
    """Each request's path in the network (dashed, the worker's colour), to its reception or
    to now; a request still in flight gets a label at its head; hover sits mid-path."""
    sent = messages(trace, upto)
    if not sent:
        return []
    now = current_x(trace, upto)
    found = []
    for w in sorted({m.worker for m in sent}):
        y = lane_y[f"W{w}"]
        xs: list[float | None] = []
        ys: list[float | None] = []
        for m in (m for m in sent if m.worker == w):
            end = now if m.received_x is None else m.received_x
            xs += [m.sent_x, m.sent_x, end, None]
            ys += [y, y - NETWORK_OFFSET, y - NETWORK_OFFSET, None]
        found.append(
            {
                "type": "scatter",
                "name": f"W{w} {IN_NETWORK.name}",
                "legendgroup": IN_NETWORK.name,
                "showlegend": False,
                "x": xs,
                "y": ys,
                "mode": "lines",
                "line": {"color": actor_colour(f"W{w}"), "width": 2, "dash": IN_NETWORK.dash},
                "hoverinfo": "skip",
            }
        )
    flying = [m for m in sent if m.in_flight]
    found.append(
        {
            "type": "scatter",
            "name": "in flight",
            "legendgroup": IN_NETWORK.name,
            "showlegend": False,
            "x": [now for _ in flying],
            "y": [lane_y[f"W{m.worker}"] - NETWORK_OFFSET for m in flying],
            "text": [f"✉ {_kind(m)} in flight" for m in flying],
            "textposition": "bottom left",
            "textfont": {"size": 10, "color": LABEL_COLOUR},
            "mode": "markers+text",
            "marker": {"symbol": "circle", "size": 7, "color": GREY},
            "hovertext": [message_hover(m) for m in flying],
            "hovertemplate": "%{hovertext}<extra></extra>",
            "cliponaxis": False,
        }
    )
    found.append(_message_hover_trace(sent, now, lane_y))
    return found


def _message_hover_trace(
    sent: Sequence[Message], now: float, lane_y: dict[str, float]
) -> dict[str, Any]:
    """Invisible points in the middle of every request's path that say what it carried.

    Hover sits only mid-path: at its ends it would outbid the step markers beneath (plotly
    prefers the smaller of two markers under the pointer).
    """
    ends = [now if m.received_x is None else m.received_x for m in sent]
    return {
        "type": "scatter",
        "name": "request hover",
        "showlegend": False,
        "x": [(m.sent_x + end) / 2 for m, end in zip(sent, ends, strict=True)],
        "y": [lane_y[f"W{m.worker}"] - NETWORK_OFFSET for m in sent],
        "hovertext": [message_hover(m) for m in sent],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "hoverlabel": {"bgcolor": [m.outcome.colour if m.outcome else GREY for m in sent]},
        "mode": "markers",
        "marker": {"size": 0, "opacity": 0},
    }


def _arrow_traces(trace: Trace, upto: int | None, lane_y: dict[str, float]) -> list[dict[str, Any]]:
    """The drop of each handled request from the network to the receiver: one arrow trace per
    outcome and kind of request (read or write), the head at the reception marker."""
    handled = [m for m in messages(trace, upto) if m.outcome is not None]
    return [
        _arrow_trace(outcome, read, chosen, lane_y)
        for outcome in OUTCOMES
        for read in (False, True)
        if (chosen := [m for m in handled if m.outcome == outcome and m.is_read == read])
    ]


def _arrow_trace(
    outcome: Outcome, read: bool, handled: Sequence[Message], lane_y: dict[str, float]
) -> dict[str, Any]:
    """Arrows of one colour and weight: top, head, then a None gap (no hover of their own)."""
    colour = outcome.colour
    xs: list[float | None] = []
    ys: list[float | None] = []
    for m in handled:
        xs += [m.received_x, m.received_x, None]
        ys += [lane_y[f"W{m.worker}"] - NETWORK_OFFSET, lane_y["receiver"], None]
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
            "size": [0, ARROW_HEAD_SIZE, 0] * len(handled),
            # a size list would otherwise make plotly.js draw faint, white-rimmed bubbles
            "opacity": 1,
            "line": {"width": 0},
        },
        "hoverinfo": "skip",
        "cliponaxis": False,
    }


def gap_hover(gap: Gap) -> str:
    """What the gap's label says on hover: whose lease, since when, and how it ended."""
    head = (
        f"W{gap.worker}'s grant #{gap.grant} is no longer the current lease, yet W{gap.worker} "
        "still believes it holds the lock and has a request to go, and the receiver would "
        "still take it: it has seen no newer token"
    )
    endings = {
        "newer": "until the receiver saw a newer token and would refuse the old one",
        "gave up": f"until W{gap.worker} gave up its token",
        "nothing to send": f"until W{gap.worker} had nothing more to send",
    }
    tail = "still open" if gap.closed_by is None else endings.get(gap.closed_by, "")
    return f"{head}: {tail}."


def _gap_shapes(shown: Sequence[Gap]) -> list[dict[str, Any]]:
    """A shaded stretch of time across every lane for each gap."""
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": gap.start,
            "x1": gap.end,
            "y0": 0,
            "y1": 1,
            "fillcolor": GAP_FILL,
            "line": {"color": GAP_COLOUR, "width": 1, "dash": "dot"},
            "layer": "below",
        }
        for gap in shown
    ]


def _gap_labels(shown: Sequence[Gap], top: float, right: float) -> list[dict[str, Any]]:
    """The gap's words above the lanes, kept inside the plot, with its story on hover: the
    first gap in full, any later one as `gap` (their labels would overlap)."""
    if not shown:
        return []
    anchors = [_anchor((gap.start + gap.end) / 2, right) for gap in shown]
    return [
        {
            "type": "scatter",
            "name": "gap labels",
            "legendgroup": GAP.name,
            "showlegend": False,
            "x": [
                {"left": g.start, "right": g.end}.get(a, (g.start + g.end) / 2)
                for g, a in zip(shown, anchors, strict=True)
            ],
            "y": [top + GAP_LABEL_ROOM * 0.72 for _ in shown],
            "text": [GAP_LABEL_LINES if i == 0 else "gap" for i in range(len(shown))],
            "textposition": [
                {"left": "middle right", "right": "middle left"}.get(a, "middle center")
                for a in anchors
            ],
            "textfont": {"size": 11, "color": GAP_COLOUR},
            "hovertext": [gap_hover(g) for g in shown],
            "hovertemplate": "%{hovertext}<extra></extra>",
            "mode": "text",
            "cliponaxis": False,
        }
    ]


def _anchor(middle: float, right: float) -> str:
    """Where a label is anchored so that it stays on the plot: by the third it sits in."""
    if middle < right / 3:
        return "left"
    if middle > 2 * right / 3:
        return "right"
    return "center"


def _band_shapes(trace: Trace) -> list[dict[str, Any]]:
    """Every other tick's band shaded, and a faint line where each tick begins."""
    left, right = x_extent(trace)
    shapes: list[dict[str, Any]] = []
    for t in range(int(left), int(right)):
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


def _now_shapes(trace: Trace, upto: int | None) -> list[dict[str, Any]]:
    """While stepping: a line at "now", and a veil over the time not reached yet."""
    if upto is None:
        return []
    now = current_x(trace, upto)
    right = x_extent(trace)[1]
    veil = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": now,
        "x1": right,
        "y0": 0,
        "y1": 1,
        "fillcolor": FUTURE_FILL,
        "line": {"width": 0},
        "layer": "above",
    }
    return [veil, _vertical(now, CURRENT_STEP_COLOUR, 2, "dash", "above")]


def legend_looks(trace: Trace, stepping: bool = True) -> list[Look]:
    """One legend entry per meaning the whole run draws, in reading order: the same at every
    step (the current-step ring only while `stepping`)."""
    every = events(trace)
    statuses = {s.status for s in lease_segments(trace)}
    looks = [LEASE_LOOKS[s] for s in LEASE_LOOKS if s in statuses]
    looks += _looks_in_order(every)
    if messages(trace):
        looks.append(IN_NETWORK)
    if pauses(trace):
        looks.append(PAUSED)
    if crashes(trace):
        looks.append(CRASHED)
    if gaps(trace):
        looks.append(GAP)
    if every and stepping:
        looks.append(CURRENT)
    return looks


def _legend_entry(look: Look) -> dict[str, Any]:
    """A legend-only trace (no points) drawn as the figure draws this meaning."""
    entry: dict[str, Any] = {
        "type": "scatter",
        "name": look.name,
        "legendgroup": look.name,
        "x": [None],
        "y": [None],
        "hoverinfo": "skip",
    }
    if look is PAUSED:
        entry.update(PAUSE_STYLE, x=[None, None], y=[None, None])
        return entry
    if look.dash:
        entry.update(mode="lines", line={"color": look.colour, "width": 3, "dash": look.dash})
        return entry
    marker: dict[str, Any] = {"symbol": look.symbol, "size": min(look.size, 12)}
    marker["color"] = look.colour
    if look is LEASE:
        marker["opacity"] = ACTIVE_LEASE_OPACITY
    if look is GAP:
        marker.update(color=GAP_FILL, line={"color": GAP_COLOUR, "width": 1})
    if look is CURRENT:
        marker["line"] = {"width": 3, "color": CURRENT_STEP_COLOUR}
    entry.update(mode="markers", marker=marker)
    return entry


def _subtitle(trace: Trace, upto: int | None) -> str:
    """Where the player is, in time and steps, and how long a lease lasts."""
    total = len(trace.steps)
    lease = f"a lease lasts {trace.bounds.lease} tick{'s' if trace.bounds.lease != 1 else ''}"
    if upto is None:
        return f"the whole run: {total} steps, t=0 to t={x_extent(trace)[1] - 1:g} · {lease}"
    count = max(0, min(upto, total))
    now = trace.state_at(count)["now"]
    where = "before the first step" if count == 0 else f"after {count} of {total} steps"
    return f"{where} · now t={now} · {lease}"


def _layout(trace: Trace, upto: int | None, lane_y: dict[str, float]) -> dict[str, Any]:
    """Axes, lanes, bands, title and the legend below the plot."""
    left, right = x_extent(trace)
    ticks = time_ticks(trace)
    top = max(lane_y.values())
    room = GAP_LABEL_ROOM if gaps(trace) else 0.0
    shown_gaps = gaps(trace, upto)
    legend_px = LEGEND_ROW_PX * math.ceil(len(legend_looks(trace, upto is not None)) / 2)
    plot_px = LANE_PX * len(lane_y) + (GAP_ROW_PX if room else 0)
    return {
        "height": TITLE_PX + plot_px + AXIS_PX + legend_px,
        "margin": {"l": 10, "r": 16, "t": TITLE_PX, "b": AXIS_PX + legend_px},
        "title": {
            "text": trace.title or trace.design.label(),
            "font": {"size": 15},
            "subtitle": {"text": _subtitle(trace, upto), "font": {"size": 12}},
            "x": 0,
            "xanchor": "left",
            "xref": "paper",
        },
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
        "shapes": [*_band_shapes(trace), *_gap_shapes(shown_gaps), *_now_shapes(trace, upto)],
        "xaxis": {
            "title": {"text": "time (ticks)", "standoff": 6},
            "range": [left, right],
            "tickvals": ticks[0],
            "ticktext": ticks[1],
            "ticks": "",
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
        },
        "yaxis": {
            "tickvals": list(lane_y.values()),
            "ticktext": [f"<b>{name}</b>" for name in lane_y],
            "range": [CLOCK_Y - 0.45, top + 0.6 + room],
            "showgrid": True,
            "gridcolor": "#eeeeee",
            "zeroline": False,
            "fixedrange": True,
            "automargin": True,
        },
    }


def timeline_figure(trace: Trace, upto: int | None = None) -> go.Figure:
    """The swimlane figure after the trace's first `upto` steps (the whole run when None).

    Built for one step only: the page's player asks for the figure of the step it shows.
    """
    lane_y = lane_names_y(trace)
    layout = _layout(trace, upto, lane_y)
    right = x_extent(trace)[1]
    data = [
        *_lease_traces(trace, upto, lane_y),
        *_pause_traces(trace, upto, lane_y),
        *_crash_traces(trace, upto, lane_y),
        *_network_traces(trace, upto, lane_y),
        *_arrow_traces(trace, upto, lane_y),
        *_marker_traces(trace, upto, lane_y),
        *_gap_labels(gaps(trace, upto), max(lane_y.values()), right),
        *(_legend_entry(look) for look in legend_looks(trace, upto is not None)),
    ]
    for entry in data:  # a stable identity per trace, so the browser updates it in place
        entry["uid"] = (
            entry["name"] if entry.get("showlegend") is False else f"legend {entry['name']}"
        )
    # Every part is built from this module's own constants, so plotly's per-attribute
    # validation is skipped (a test validates the figures once).
    return go.Figure({"data": data, "layout": layout}, _validate=False)
