"""The playground page: be the scheduler. The run lives in the URL (`d`, `b`, `a`)."""

from __future__ import annotations

import streamlit as st

from model.design import BOUND_LIMITS, BY_BOUND, Bounds, Design, DesignError
from model.formats.itf import trace_from_any_json, trace_to_itf_json
from model.formats.trace import MAX_TRACE_BYTES, Trace, TraceError, trace_to_json
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from model.rules import Action
from webapp.content import playground
from webapp.content.common import link_not_understood
from webapp.screens import limits, url_state
from webapp.screens.limits import heavy_work
from webapp.screens.option_widgets import option_input
from webapp.screens.scheduler_view import action_buttons, status_lines, steps_view, timeline_view
from webapp.screens.uploads import read_trace_upload
from webapp.show.design_form import OPTION_FIELDS, design_from_values, values_of
from webapp.show.downloads import offer_download
from webapp.show.links import file_name, full_link, whole_number
from webapp.show.playground import (
    AT_PARAM,
    DEFAULT_BOUNDS,
    DEFAULT_PRESET,
    LinkError,
    Run,
    finish,
    play,
    run_from_params,
    take,
    undo,
)
from webapp.show.text import escape_markdown

CUSTOM = "(custom options)"
PAGE_PATH = "playground"
"""The page's path in the app (its `url_path` in the navigation)."""
MESSAGE_KEY = "playground-message"
FINISH_KEY = "playground-finish-asked"
"""Set by the Finish button; the search runs on the board, under the heavy-work limit."""


def _show_run(run: Run, at: int | None = None) -> None:
    """Write the run into the URL, so the next rerun (and a copied link) shows it: at its
    end, or at step `at` of it."""
    url_state.put_all(run.link_params())
    if at is None or at >= len(run.actions):
        if url_state.has(AT_PARAM):
            url_state.drop(AT_PARAM)
    else:
        url_state.put_all({AT_PARAM: str(at)})


def _position(run: Run) -> int:
    """The step the board stands at: the link's `at`, else the run's end (a bad `at` is
    said once and the end is shown)."""
    raw = url_state.get(AT_PARAM)
    if raw is None:
        return len(run.actions)
    try:
        return whole_number(raw[:20], AT_PARAM, 0, len(run.actions))
    except LinkError as error:
        st.session_state[MESSAGE_KEY] = ("error", link_not_understood(str(error)))
        url_state.drop(AT_PARAM)
        return len(run.actions)


def _go_to(at: int) -> None:
    """Step button callback: stand at another step of the same run."""
    run = _current()
    if run is not None:
        _show_run(run, max(0, min(at, len(run.actions))))


def _current() -> Run | None:
    """The run in the URL, or None (with the error kept for display) when the link is bad."""
    params = {name: url_state.get(name) or "" for name in ("d", "b", "a")}
    try:
        return run_from_params({k: v for k, v in params.items() if v})
    except LinkError as error:
        st.session_state[MESSAGE_KEY] = ("error", link_not_understood(str(error)))
        return None


def _pick(action: Action) -> None:
    """Button callback: take the action at the step the board stands at; the steps after it
    (if the board stood earlier in the run) give way to it."""
    run = _current()
    if run is None:
        return
    at = _position(run)
    try:
        _show_run(take(Run(run.design, run.bounds, run.actions[:at]), action))
    except LinkError as error:
        st.session_state[MESSAGE_KEY] = ("error", str(error))


def _undo() -> None:
    """Drop the last step."""
    run = _current()
    if run is not None:
        _show_run(undo(run))


def _reset() -> None:
    """Start the same design again from the initial state."""
    run = _current()
    if run is not None:
        _show_run(Run(run.design, run.bounds))


def _ask_finish() -> None:
    """Button callback: ask for the shortest violating continuation (searched on the board)."""
    st.session_state[FINISH_KEY] = True


def _finish_if_asked(run: Run) -> Run:
    """When Finish was pressed, search for the shortest violating continuation under the
    heavy-work limit and append it; the run to draw (unchanged when busy or none is found)."""
    prop = st.session_state.get("playground-finish-prop", "P1")
    if not st.session_state.pop(FINISH_KEY, False) or prop not in PROPERTY_NAMES:
        return run
    here = Run(run.design, run.bounds, run.actions[: _position(run)])
    with heavy_work(playground.FINISH_WORK, wait=limits.WAIT_SECONDS) as admitted:
        if not admitted:
            return run
        with st.spinner(playground.searching_violation(prop)):
            completion = finish(here, prop)
    if not completion.found:
        st.session_state[MESSAGE_KEY] = ("warning", completion.message)
        return run
    extended = Run(run.design, run.bounds, here.actions + completion.actions)
    _show_run(extended)
    st.session_state[MESSAGE_KEY] = ("success", completion.message)
    return extended


def _fresh() -> None:
    """Forget a bad link and start the default design."""
    url_state.replace({})
    _show_run(Run(PRESETS[DEFAULT_PRESET].design, DEFAULT_BOUNDS))


def _load_trace() -> None:
    """Uploader callback: replay the trace file and make it the run (errors are kept)."""
    upload = st.session_state.get("playground-upload")
    if upload is None:
        return
    data = upload.getvalue()
    if len(data) > MAX_TRACE_BYTES:
        st.session_state[MESSAGE_KEY] = (
            "error",
            playground.file_too_large(len(data), MAX_TRACE_BYTES),
        )
        return
    try:
        trace = read_trace_upload(data, trace_from_any_json)
        if trace is None:
            return
        _show_run(Run(trace.design, trace.bounds, trace.actions))
    except (TraceError, LinkError) as error:
        st.session_state[MESSAGE_KEY] = ("error", playground.file_not_loaded(str(error)))
        return
    st.session_state[MESSAGE_KEY] = ("success", playground.loaded(len(trace.steps)))


FORM_OF = "play-form-of"
"""The run (design and bounds, as in the link) the design form was last filled from."""


def _option_keys() -> dict[str, str]:
    """Each option's widget key in the design form."""
    return {option.name: f"play-opt-{option.name}" for option in OPTION_FIELDS}


def _fill_form(run: Run) -> None:
    """Show the run's design and bounds in the form whenever the run is another one (a new
    start, a loaded file, a link), keeping the student's edits otherwise."""
    params = run.link_params()
    shown = (params["d"], params["b"])
    keys = [*_option_keys().values(), "play-preset", *(f"play-{name}" for name in BOUND_LIMITS)]
    if st.session_state.get(FORM_OF) == shown and all(key in st.session_state for key in keys):
        return
    st.session_state[FORM_OF] = shown
    st.session_state["play-preset"] = _chooser_name(run.design)
    values = values_of(run.design)
    for name, key in _option_keys().items():
        st.session_state[key] = values[name]
    for name in BOUND_LIMITS:
        st.session_state[f"play-{name}"] = getattr(run.bounds, name)


def _chooser_name(design: Design) -> str:
    """The preset with exactly this design, or the custom entry."""
    return next((n for n, p in PRESETS.items() if p.design == design), CUSTOM)


def _form_design() -> Design:
    """The design the form's options describe (a DesignError says what to change)."""
    state = st.session_state
    return design_from_values({name: state[key] for name, key in _option_keys().items()})


def _preset_chosen() -> None:
    """Chooser callback: a preset puts its options in the form (the custom entry keeps them)."""
    name = st.session_state["play-preset"]
    if name == CUSTOM:
        return
    values = values_of(PRESETS[name].design)
    for option, key in _option_keys().items():
        st.session_state[key] = values[option]


def _option_changed() -> None:
    """Option callback: the chooser names the preset these options make, or the custom entry."""
    try:
        st.session_state["play-preset"] = _chooser_name(_form_design())
    except DesignError:
        st.session_state["play-preset"] = CUSTOM


def _start_design() -> None:
    """Button callback: start a new run of the form's design and bounds (errors are kept)."""
    state = st.session_state
    try:
        design = _form_design()
        sizes = {name: int(state[f"play-{name}"]) for name in BOUND_LIMITS}
        run = Run(design, Bounds(**sizes))
        design.check_fits(run.bounds)
        play(run)
    except (DesignError, LinkError) as error:
        state[MESSAGE_KEY] = ("error", playground.design_not_started(str(error)))
        return
    _show_run(run)


def _design_form(run: Run) -> None:
    """Choose a preset or change any option, and the bounds; the button starts a new run.

    The chooser and the options agree: a preset fills in its options, and any option change
    makes the chooser name the matching preset or the custom entry, so what is started is
    always what the options show.
    """
    _fill_form(run)
    names = [*PRESETS, CUSTOM]
    with st.expander(playground.DESIGN_FORM, expanded=False):
        st.selectbox("Design", names, key="play-preset", on_change=_preset_chosen)
        option_cols = st.columns(3)
        for index, option in enumerate(OPTION_FIELDS):
            with option_cols[index % 3]:
                option_input(option, f"play-opt-{option.name}", on_change=_option_changed)
        cols = st.columns(len(BOUND_LIMITS))
        for col, (name, (low, high)) in zip(cols, BOUND_LIMITS.items(), strict=True):
            col.number_input(
                BY_BOUND[name].widget_label,
                min_value=low,
                max_value=high,
                step=1,
                key=f"play-{name}",
            )
        st.button(
            playground.START_DESIGN,
            on_click=_start_design,
            key="playground-start",
            type="primary",
        )
        st.file_uploader(
            playground.upload_label(MAX_TRACE_BYTES),
            type=["json"],
            key="playground-upload",
            on_change=_load_trace,
        )


def _messages() -> None:
    """Show (once) what the last callback had to say."""
    kept = st.session_state.pop(MESSAGE_KEY, None)
    if kept is not None:
        kind, text = kept
        show = {"error": st.error, "warning": st.warning, "success": st.success}[kind]
        show(escape_markdown(text, limit=600))


def render_playground() -> None:
    """The whole page: the design controls (a form and a trace file), then the board (a
    fragment)."""
    st.title("Be the scheduler")
    st.markdown(playground.INTRO)
    run = _current()
    if run is None:
        _messages()
        st.button(playground.FRESH_RUN, on_click=_fresh, key="playground-fresh", type="primary")
        return
    _design_form(run)
    _board()


def page_url() -> str:
    """The address the visitor's browser shows for this page ("" when the server cannot tell)."""
    return str(st.context.url or "")


def _position_controls(at: int, count: int) -> None:
    """First / Back / Next / Last through the run, and where the board stands."""
    moves = (
        ("First", ":material/first_page:", 0, at == 0),
        ("Back", ":material/chevron_left:", at - 1, at == 0),
        ("Next", ":material/chevron_right:", at + 1, at >= count),
        ("Last", ":material/last_page:", count, at >= count),
    )
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        for label, icon, target, disabled in moves:
            st.button(
                label,
                icon=icon,
                key=f"playground-{label.lower()}",
                on_click=_go_to,
                args=(target,),
                disabled=disabled,
            )
        st.markdown(playground.standing_at(at, count), width="content")


def _moves(run: Run, here: Trace, at: int) -> None:
    """The actions enabled where the board stands, then undo, reset and finish: beside the
    timeline on a wide screen, right above it on a phone."""
    st.markdown(playground.your_move(at + 1))
    if at < len(run.actions):
        st.caption(playground.replaces_later(len(run.actions) - at))
    action_buttons(here, "play", _pick, per_row=2)
    undo_col, reset_col = st.columns(2)
    undo_col.button(
        "Undo",
        key="playground-undo",
        on_click=_undo,
        disabled=not run.actions,
        icon=":material/undo:",
        width="stretch",
    )
    reset_col.button(
        "Reset",
        key="playground-reset",
        on_click=_reset,
        disabled=not run.actions,
        icon=":material/restart_alt:",
        width="stretch",
    )
    st.selectbox(
        playground.FINISH_LABEL,
        PROPERTY_NAMES,
        format_func=lambda n: f"{n}, {BY_NAME[n].title}",
        key="playground-finish-prop",
        label_visibility="collapsed",
    )
    st.button(
        playground.FINISH,
        key="playground-finish",
        on_click=_ask_finish,
        icon=":material/fast_forward:",
        width="stretch",
    )


@st.fragment
def _board() -> None:
    """The run so far and the moves: a click reruns only this part of the page."""
    run = _current()
    if run is not None:
        run = _finish_if_asked(run)
    if run is None:
        _messages()
        st.button(playground.FRESH_RUN, on_click=_fresh, key="playground-fresh-board")
        return
    trace = play(run)
    at = _position(run)
    here = play(Run(run.design, run.bounds, run.actions[:at]))
    _messages()
    preset = next((n for n, p in PRESETS.items() if p.design == run.design), "")
    name = f"{preset} ({run.design.in_words()})" if preset else run.design.in_words()
    st.caption(playground.design_caption(escape_markdown(name, limit=600), run.bounds))
    _position_controls(at, len(run.actions))
    moves, drawn = st.columns([2, 3])
    with moves:
        _moves(run, here, at)
    with drawn:
        timeline_view(trace, "play", at)
    st.markdown(playground.PROPERTIES_HERE)
    status_lines(here)
    steps_view(trace, at)
    st.markdown(playground.SHARE)
    shared = run.link_params() | ({AT_PARAM: str(at)} if at < len(run.actions) else {})
    st.code(full_link(page_url(), PAGE_PATH, shared), language=None, wrap_lines=True)
    offer_download(
        None,
        playground.DOWNLOAD_JSON,
        trace_to_json(trace),
        file_name=file_name(run.design, "run", "json"),
        mime="application/json",
        key="playground-download",
    )
    offer_download(
        None,
        playground.DOWNLOAD_ITF,
        trace_to_itf_json(trace),
        file_name=file_name(run.design, "run", "itf.json"),
        mime="application/json",
        key="playground-download-itf",
    )
