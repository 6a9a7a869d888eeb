"""The step player: First / Back / Play / Next / Last, kept in the URL, driving the timeline,
the narration and the state table together.

Used by the paused worker's story, every walkthrough chapter and every counterexample, so
stepping behaves the same on every page. The step position lives in the URL (`url_state`),
so a copied link reopens the same step; the figure of that one step is drawn, never an
animation of its own, so there is one stepper and it is this one. Play advances the same
position once a second (a fragment that reruns on a timer) and stops at the last step; Play
at the last step starts again from step 0. A run opens on the step that matters (its first
violation, else its last step) unless the link names another.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import plotly.graph_objects as go
import streamlit as st

from model.formats.trace import Trace
from webapp.content import player
from webapp.draw.swimlane import timeline_figure
from webapp.screens import url_state
from webapp.screens.scheduler_link import step_it_yourself
from webapp.show.style import ACCEPTED, REJECTED, VIOLATING
from webapp.show.views import actor_rows, clamp_step, narration, opening_step, step_in_link

GLYPHS = {
    ACCEPTED.key: ACCEPTED.glyph,
    REJECTED.key: REJECTED.glyph,
    VIOLATING.key: VIOLATING.glyph,
}
PLAY_SECONDS: Final = 1.0
"""How long Play shows each step."""
SETTLE_SECONDS: Final = 3.0
"""How long after Play stops the browser's URL may still lag the position shown."""
PLOT_CONFIG: Final = {"displaylogo": False, "scrollZoom": False}


@lru_cache(maxsize=512)
def figure_at(trace: Trace, upto: int) -> go.Figure:
    """The timeline of a run after `upto` steps, built once per run and step.

    Streamlit copies a figure before sending it and never changes it, so one object can be
    shown to every visitor at that step: a class stepping through the same chapter shares it.
    """
    return timeline_figure(trace, upto)


def current_step(param: str, count: int, start: int = 0) -> int:
    """The step position in the URL, or `start` when the URL names none (or a bad one)."""
    chosen = step_in_link(url_state.get(param), count)
    return clamp_step(start, count) if chosen is None else chosen


def link_problem(param: str, count: int) -> str | None:
    """What is wrong with the step the URL names, in words (None: nothing, or no step)."""
    raw = url_state.get(param)
    if raw is None or step_in_link(raw, count) is not None:
        return None
    return player.step_out_of_range(count)


def _playing(key: str) -> str:
    """Session key: whether this player is playing."""
    return f"{key}-playing"


def _just_started(key: str) -> str:
    """Session key: Play was just pressed, so the next run shows the position without moving."""
    return f"{key}-play-started"


def _shown(key: str) -> str:
    """Session key: the position this player showed last."""
    return f"{key}-shown"


def _stopped(key: str) -> str:
    """Session key: when Play last stopped (seconds on the monotonic clock)."""
    return f"{key}-stopped"


def is_playing(key: str) -> bool:
    """Whether the player with this key is playing."""
    return bool(st.session_state.get(_playing(key), False))


def _stop(key: str) -> None:
    """Stop playing, remembering when (the browser may still echo an older URL for a moment)."""
    if is_playing(key):
        st.session_state[_stopped(key)] = time.monotonic()
    st.session_state[_playing(key)] = False


def _move_to(param: str, key: str, position: int) -> None:
    """Show `position` from now on: in this session and in the URL."""
    st.session_state[_shown(key)] = position
    if url_state.get(param) != str(position):
        url_state.put_all({param: str(position)})


def position_to_show(param: str, count: int, key: str, timed: bool, start: int = 0) -> int:
    """The URL's position, except while Play runs or has just stopped: then a rerun can carry
    the browser's URL from before the last step reached it, and the position this player
    showed last is the true one."""
    shown = st.session_state.get(_shown(key))
    stopped = st.session_state.get(_stopped(key), -SETTLE_SECONDS)
    settling = timed or time.monotonic() - stopped < SETTLE_SECONDS
    if shown is None or not settling:
        return current_step(param, count, start)
    return clamp_step(shown, count)


def _set_step(param: str, value: int, key: str) -> None:
    """Button callback: stop playing and move to the button's position."""
    _stop(key)
    _move_to(param, key, value)


def _toggle_play(param: str, count: int, key: str) -> None:
    """Play / Pause callback; Play at the last step starts again from step 0."""
    if is_playing(key):
        _stop(key)
        return
    if position_to_show(param, count, key, timed=False, start=count) >= count:
        _move_to(param, key, 0)
    st.session_state[_playing(key)] = True
    st.session_state[_just_started(key)] = True


def advance_if_playing(position: int, count: int, key: str) -> int:
    """One step on while playing (not on the run that Play itself caused); stop at the end."""
    if not is_playing(key) or st.session_state.pop(_just_started(key), False):
        return position
    position = min(position + 1, count)
    if position >= count:
        _stop(key)
    return position


def step_controls(param: str, count: int, key: str, position: int) -> None:
    """First / Back / Play / Next / Last and the position, in one row that wraps on a phone."""
    playing = is_playing(key)
    moves = (
        ("First", ":material/first_page:", 0, position == 0),
        ("Back", ":material/chevron_left:", max(position - 1, 0), position == 0),
        ("Next", ":material/chevron_right:", min(position + 1, count), position == count),
        ("Last", ":material/last_page:", count, position == count),
    )
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        for label, icon, target, disabled in moves[:2]:
            _move_button(label, icon, (param, target, key), disabled, key)
        st.button(
            "Pause" if playing else "Play",
            icon=":material/pause:" if playing else ":material/play_arrow:",
            key=f"{key}-play",
            on_click=_toggle_play,
            args=(param, count, key),
            disabled=count == 0,
            help=player.PLAY_HELP,
        )
        for label, icon, target, disabled in moves[2:]:
            _move_button(label, icon, (param, target, key), disabled, key)
        st.markdown(player.step_of(position, count), width="content")


def _move_button(
    label: str, icon: str, args: tuple[str, int, str], disabled: bool, key: str
) -> None:
    """One of First / Back / Next / Last: stops Play and moves to its position."""
    st.button(
        label,
        icon=icon,
        key=f"{key}-{label.lower()}",
        disabled=disabled,
        on_click=_set_step,
        args=args,
    )


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
    st.markdown("\n\n".join(lines) if lines else player.NO_STEPS)


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


@dataclass(frozen=True)
class Layout:
    """How the player lays out its runs: side by side (with a heading each), in tabs (one
    run at a time at the page's full width, the open tab kept in the URL under `tab_param`),
    or one below the other; and the step it opens on when the URL names none."""

    start: int
    labels: tuple[str, ...] = ()
    side_by_side: bool = False
    tab_param: str = ""


def _player(traces: Sequence[Trace], param: str, key: str, timed: bool, layout: Layout) -> None:
    """The controls, then each run's figure, narration and state at the same position.

    `timed` says whether this fragment was set to rerun on a timer; when that no longer
    matches Play, a full rerun sets the timer up again (a fragment cannot change its own).
    """
    count = max((len(t.steps) for t in traces), default=0)
    problem = link_problem(param, count)
    position = position_to_show(param, count, key, timed, layout.start)
    if problem is not None:
        st.error(player.bad_step_link(problem, position))
    if is_playing(key) != timed:
        _move_to(param, key, position)
        st.rerun()
    position = advance_if_playing(position, count, key)
    _move_to(param, key, position)
    step_controls(param, count, key, position)
    if layout.tab_param:
        _tabbed_runs(traces, position, key, layout)
        return
    if layout.side_by_side:
        columns = st.columns(len(traces), gap="medium")
        for index, (column, trace) in enumerate(zip(columns, traces, strict=True)):
            with column:
                if index < len(layout.labels):
                    st.subheader(layout.labels[index])
                _one_run(trace, position, f"{key}-timeline-{index}", stacked=True)
        return
    for index, trace in enumerate(traces):
        _one_run(trace, position, f"{key}-timeline-{index}", stacked=False)


def _tabbed_runs(traces: Sequence[Trace], position: int, key: str, layout: Layout) -> None:
    """One tab per run under the one stepper: only the open tab's run is drawn, at the
    page's full width, its narration beside its state (stacked on a phone)."""
    tabs = st.tabs(list(layout.labels), key=layout.tab_param, bind="query-params")
    for index, (tab, trace) in enumerate(zip(tabs, traces, strict=True)):
        if tab.open is False:
            continue
        with tab:
            _one_run(trace, position, f"{key}-timeline-{index}", stacked=False)


def _one_run(trace: Trace, position: int, chart_key: str, stacked: bool) -> None:
    """One run's figure, then its narration and state (beside each other, or stacked)."""
    upto = min(position, len(trace.steps))
    st.plotly_chart(figure_at(trace, upto), width="stretch", key=chart_key, config=PLOT_CONFIG)
    step_it_yourself(trace, upto)
    if stacked:
        st.markdown(player.WHAT_HAPPENS)
        show_narration(trace, upto)
        st.markdown(player.state_after(upto))
        show_state_table(trace, upto)
        return
    left, right = st.columns([1, 1])
    with left:
        st.markdown(player.WHAT_HAPPENS)
        show_narration(trace, upto)
    with right:
        st.markdown(player.state_after(upto))
        show_state_table(trace, upto)


def show_traces(
    traces: Sequence[Trace],
    param: str,
    key: str,
    labels: Sequence[str] = (),
    side_by_side: bool = False,
    start: int | None = None,
    tab_param: str = "",
) -> int:
    """One stepper shared by several runs, then each run's timeline, narration and state.

    The runs are shown side by side (each under its label), in tabs named by their labels
    (with `tab_param`, the URL parameter of the open tab), or one below the other. A link
    without a step opens on `start`, by default the step that matters (`opening_step`).
    Returns the position shown when the page ran (Play moves it on by itself afterwards).
    """
    layout = Layout(
        opening_step(traces) if start is None else start, tuple(labels), side_by_side, tab_param
    )
    timed = is_playing(key)
    stepper = st.fragment(_player, run_every=PLAY_SECONDS if timed else None)
    stepper(traces, param, key, timed, layout)
    count = max((len(t.steps) for t in traces), default=0)
    return position_to_show(param, count, key, timed, layout.start)
