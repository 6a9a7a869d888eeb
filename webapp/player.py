"""The step player: first/back/next/last controls kept in the URL, the timeline and narration.

Used by the paused worker's story, every walkthrough chapter and every counterexample, so stepping
and highlighting behave the same on every page. The step position lives in
`st.query_params`, so a copied link reopens the same step.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from model.trace import Trace
from webapp.style import ACCEPTED, REJECTED, VIOLATING
from webapp.timeline import timeline_figure
from webapp.views import actor_rows, clamp_step, narration

GLYPHS = {
    ACCEPTED.key: ACCEPTED.glyph,
    REJECTED.key: REJECTED.glyph,
    VIOLATING.key: VIOLATING.glyph,
}


def current_step(param: str, count: int) -> int:
    """The step position in the URL, clamped to the trace."""
    return clamp_step(st.query_params.get(param, "0"), count)


def _set_step(param: str, value: int) -> None:
    """Button callback: write the new position into the URL."""
    st.query_params[param] = str(value)


def step_controls(param: str, count: int, key: str) -> int:
    """First / back / next / last buttons and the position; returns the position to show."""
    position = current_step(param, count)
    cols = st.columns([1, 1, 1, 1, 4])
    buttons = (
        ("First", ":material/first_page:", 0, position == 0),
        ("Back", ":material/chevron_left:", max(position - 1, 0), position == 0),
        ("Next", ":material/chevron_right:", min(position + 1, count), position == count),
        ("Last", ":material/last_page:", count, position == count),
    )
    for col, (label, icon, target, disabled) in zip(cols, buttons, strict=False):
        col.button(
            label,
            icon=icon,
            key=f"{key}-{label.lower()}",
            disabled=disabled,
            on_click=_set_step,
            args=(param, target),
            width="stretch",
        )
    cols[4].markdown(f"**Step {position} of {count}**")
    return position


def show_narration(trace: Trace, position: int) -> None:
    """The numbered sentences of the run, the current one highlighted, later ones greyed."""
    lines = []
    for line in narration(trace, position):
        glyph = GLYPHS.get(line.outcome, "")
        text = f"{line.number}. {glyph + ' ' if glyph else ''}{line.sentence}"
        for reason in line.reasons:
            text += f"  \n  **{VIOLATING.glyph} {reason}**"
        if line.current:
            lines.append(f":orange-background[▶ **{text}**]")
        elif line.number > position:
            lines.append(f":gray[{text}]")
        else:
            lines.append(text)
    st.markdown("\n\n".join(lines) if lines else "_The run has no steps._")


def show_state_table(trace: Trace, position: int) -> None:
    """The state of every actor after `position` steps: in words, then the model's variables."""
    rows = actor_rows(trace, position)
    st.table(
        {
            "actor": [r.actor for r in rows],
            "in words": [r.words for r in rows],
            "the model's variables": [r.variables for r in rows],
        },
        border="horizontal",
        hide_index=True,
    )


def show_traces(traces: Sequence[Trace], param: str, key: str) -> int:
    """Step controls shared by several runs, then each run's timeline, narration and state."""
    count = max((len(t.steps) for t in traces), default=0)
    position = step_controls(param, count, key)
    for index, trace in enumerate(traces):
        upto = min(position, len(trace.steps))
        st.plotly_chart(
            timeline_figure(trace, upto),
            width="stretch",
            key=f"{key}-timeline-{index}-{upto}",
        )
        left, right = st.columns([1, 1])
        with left:
            st.markdown("**What happens, step by step**")
            show_narration(trace, upto)
        with right:
            st.markdown(f"**State after step {upto}**")
            show_state_table(trace, upto)
    return position
