"""Widgets shared by the playground and the *break it* exercises: buttons, state, statuses.

The student is the scheduler: every enabled action is a button, and the state of every
actor, each property's status and the timeline are redrawn after each click. The timeline
here is the shared swimlane figure's final frame without the animation frames, whose cost
grows with the square of the run's length and would slow every click.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from model.rules import Action
from model.trace import Trace
from webapp.events import lane_names_y, time_ticks, x_extent
from webapp.player import show_narration, show_state_table
from webapp.playground import choices, encode_action, property_statuses
from webapp.timeline import CLOCK_Y, frame_at

BUTTON_COLUMNS = 4


def static_timeline(trace: Trace) -> go.Figure:
    """The swimlane timeline of the whole run, the last step ringed, with no animation frames."""
    lane_y = lane_names_y(trace)
    frame = frame_at(trace, len(trace.steps) if trace.steps else None)
    left, right = x_extent(trace)
    ticks = time_ticks(trace)
    layout: dict[str, Any] = {
        "shapes": list(frame.shapes),
        "annotations": list(frame.annotations),
        "height": 120 + 62 * len(lane_y),
        "margin": {"l": 90, "r": 20, "t": 60, "b": 50},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "plot_bgcolor": "white",
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "font": {"size": 11}},
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
    return go.Figure({"data": list(frame.data), "layout": layout}, _validate=False)


def action_buttons(trace: Trace, key: str, on_pick: Callable[[Action], None]) -> None:
    """One button per enabled action; clicking calls `on_pick(action)` before the rerun."""
    found = choices(trace)
    if not found:
        st.info("No action is enabled: this run has ended (a normal end, not an error).")
        return
    columns = st.columns(BUTTON_COLUMNS)
    for index, choice in enumerate(found):
        columns[index % BUTTON_COLUMNS].button(
            choice.label,
            key=f"{key}-{encode_action(choice.action)}",
            on_click=on_pick,
            args=(choice.action,),
            help=f"{choice.actor} takes this step",
            width="stretch",
        )


def status_lines(trace: Trace) -> None:
    """Each property's status at the current state, with the reason when it failed."""
    for status in property_statuses(trace):
        if status.violated:
            st.markdown(f":red[**{status.line()}**]")
        else:
            st.markdown(f":green[{status.line()}]")


def run_view(trace: Trace, key: str) -> None:
    """The timeline, then the narration and the state of every actor side by side."""
    st.plotly_chart(static_timeline(trace), width="stretch", key=f"{key}-timeline")
    left, right = st.columns([3, 2])
    with left:
        st.markdown("**What happened, step by step**")
        show_narration(trace, len(trace.steps))
    with right:
        st.markdown(f"**State of every actor after step {len(trace.steps)}**")
        show_state_table(trace, len(trace.steps))
