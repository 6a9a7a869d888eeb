"""Widgets shared by the playground and the *break it* exercises: buttons, state, statuses.

The student is the scheduler: every enabled action is a button, and the state of every
actor, each property's status and the timeline are redrawn after each click. The timeline
here is the shared swimlane figure, drawn for the run so far.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from model.formats.trace import Trace
from model.rules import Action
from webapp.content import scheduler
from webapp.draw.swimlane import timeline_figure
from webapp.screens.player import show_narration, show_state_table
from webapp.show.playground import choices, encode_action, property_statuses

BUTTON_COLUMNS = 4


def action_buttons(
    trace: Trace, key: str, on_pick: Callable[[Action], None], per_row: int = BUTTON_COLUMNS
) -> None:
    """One button per enabled action, `per_row` a row; a click calls `on_pick(action)`."""
    found = choices(trace)
    if not found:
        st.info(scheduler.RUN_ENDED)
        return
    columns = st.columns(per_row)
    for index, choice in enumerate(found):
        columns[index % per_row].button(
            choice.label,
            key=f"{key}-{encode_action(choice.action)}",
            on_click=on_pick,
            args=(choice.action,),
            help=scheduler.takes_this_step(choice.actor),
            width="stretch",
        )


def status_lines(trace: Trace) -> None:
    """Each property's status at the current state, with the reason when it failed."""
    for status in property_statuses(trace):
        if status.violated:
            st.markdown(f":red[**{status.line()}**]")
        elif status.exercised:
            st.markdown(f":green[{status.line()}]")
        else:
            st.markdown(f":gray[{status.line()}]")


def run_view(trace: Trace, key: str) -> None:
    """The timeline, then the narration and the state of every actor side by side."""
    timeline_view(trace, key)
    steps_view(trace)


def timeline_view(trace: Trace, key: str, at: int | None = None) -> None:
    """The swimlane timeline of the run: at its end, or standing at step `at` (the steps
    after it veiled)."""
    at = len(trace.steps) if at is None else at
    figure = timeline_figure(trace, upto=at if at < len(trace.steps) else at or None)
    st.plotly_chart(figure, width="stretch", key=f"{key}-timeline")


def steps_view(trace: Trace, at: int | None = None) -> None:
    """The narration (the steps after `at` greyed) and the state of every actor after step
    `at` (by default the last), side by side."""
    at = len(trace.steps) if at is None else at
    left, right = st.columns([3, 2])
    with left:
        st.markdown(scheduler.STEP_BY_STEP)
        show_narration(trace, at)
    with right:
        st.markdown(scheduler.state_after(at))
        show_state_table(trace, at)
