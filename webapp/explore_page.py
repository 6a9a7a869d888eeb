"""The explore page: a design form bound to the URL, the exploration, verdicts, counterexamples."""

from __future__ import annotations

from typing import Any

import streamlit as st

from model.design import BOUND_LIMITS, Bounds, Design, DesignError
from model.explorer import Exploration
from model.itf import trace_to_itf_json
from model.presets import PRESET_NAMES, PRESETS
from model.properties import BY_NAME
from model.trace import trace_to_json
from webapp.cache import WEB_MAX_SECONDS, WEB_MAX_STATES, explore_cached, replay_cached
from webapp.captions import lesson_caption
from webapp.design_form import (
    BOUND_HELP,
    CUSTOM,
    OPTION_FIELDS,
    bounds_from_values,
    design_from_values,
    limits_text,
    values_of,
)
from webapp.limits import heavy_work
from webapp.links import (
    LinkError,
    bounds_from_params,
    bounds_params,
    design_from_params,
    design_params,
    file_name,
    matching_preset,
    whole_number,
)
from webapp.option_widgets import option_input
from webapp.player import show_traces
from webapp.text import escape_markdown
from webapp.verdicts import verdict_rows, violated

MIN_BUDGET = 1_000
"""Smallest state budget the page accepts."""

FORM_KEYS = (*(o.name for o in OPTION_FIELDS), *BOUND_LIMITS, "budget", "preset_choice")
"""Session keys of the form's widgets."""

RESULT_PARAMS = ("run", "cex", "step")
"""URL parameters that belong to one set of results, dropped when the form changes."""


def _url_state() -> tuple[Design, Bounds, int, list[str]]:
    """The design, bounds and budget a link asks for, with what was wrong in it.

    A bad value is reported and replaced by the default, so a mistyped link still opens
    a working page.
    """
    problems = []
    params = {key: st.query_params[key] for key in st.query_params}
    try:
        design = design_from_params(params)
    except LinkError as error:
        design, problems = Design(), [str(error)]
    try:
        bounds = bounds_from_params(params, Bounds())
    except LinkError as error:
        bounds = Bounds()
        problems.append(str(error))
    budget = WEB_MAX_STATES
    if (text := params.get("budget")) is not None:
        try:
            budget = whole_number(text[:20], "budget", MIN_BUDGET, WEB_MAX_STATES)
        except LinkError as error:
            problems.append(str(error))
    return design, bounds, budget, problems


def _fill_form_from_url() -> None:
    """On a fresh page, put the link's design, bounds and budget into the widgets."""
    if all(key in st.session_state for key in FORM_KEYS):
        return
    design, bounds, budget, problems = _url_state()
    for key, value in values_of(design).items():
        st.session_state[key] = value
    for name in BOUND_LIMITS:
        st.session_state[name] = getattr(bounds, name)
    st.session_state["budget"] = budget
    st.session_state["preset_choice"] = matching_preset(design) or CUSTOM
    for problem in problems:
        st.error(f"This link was partly not understood: {escape_markdown(problem)}")


def _write_url(design: Design, bounds: Bounds, budget: int) -> None:
    """Keep the whole form in the URL, plus the results parameters that still apply."""
    kept = {key: st.query_params[key] for key in RESULT_PARAMS if key in st.query_params}
    params = {**design_params(design), **bounds_params(bounds)}
    if budget != WEB_MAX_STATES:
        params["budget"] = str(budget)
    if dict(st.query_params) != {**params, **kept}:
        st.query_params.from_dict({**params, **kept})


def _results_stale() -> None:
    """Any change to the form hides the previous results until Run is pressed again."""
    for key in RESULT_PARAMS:
        if key in st.query_params:
            del st.query_params[key]


def _apply_preset() -> None:
    """Copy the chosen preset's options into the form's widgets."""
    name = st.session_state.get("preset_choice")
    if name in PRESETS:
        for key, value in values_of(PRESETS[name].design).items():
            st.session_state[key] = value
    _results_stale()


def _run() -> None:
    """Remember in the URL that the visitor asked for results."""
    st.query_params["run"] = "1"


def _form() -> tuple[dict[str, Any], dict[str, Any]]:
    """The preset chooser, the option widgets and the bound widgets; returns their values."""
    _fill_form_from_url()
    st.selectbox(
        "Start from a preset",
        [CUSTOM, *PRESET_NAMES],
        key="preset_choice",
        on_change=_apply_preset,
        help="Fills in the options below; you can then change any of them.",
    )
    left, right = st.columns([2, 1])
    options: dict[str, Any] = {}
    with left:
        st.markdown("**Design options**")
        grid = st.columns(2)
        for index, option in enumerate(OPTION_FIELDS):
            with grid[index % 2]:
                options[option.name] = option_input(option, option.name, on_change=_results_stale)
    sizes: dict[str, Any] = {}
    with right:
        st.markdown("**Bounds**")
        st.caption(f"Limits: {limits_text()}.")
        for name, (low, high) in BOUND_LIMITS.items():
            sizes[name] = st.number_input(
                f"{BOUND_HELP[name]} ({low}..{high})",
                min_value=low,
                max_value=high,
                step=1,
                key=name,
                on_change=_results_stale,
            )
        sizes["budget"] = st.number_input(
            f"State budget ({MIN_BUDGET:,}..{WEB_MAX_STATES:,})",
            min_value=MIN_BUDGET,
            max_value=WEB_MAX_STATES,
            step=10_000,
            key="budget",
            on_change=_results_stale,
            help="The explorer stops after this many states (or after "
            f"{WEB_MAX_SECONDS:.0f} s) and reports what it found so far.",
        )
    return options, sizes


def _summary(exploration: Exploration) -> None:
    """Counts, completeness and the verdict table."""
    if not exploration.complete:
        st.warning(
            f"Incomplete: the exploration stopped ({exploration.stopped_by}) after "
            f"{exploration.states:,} states. Violations found so far are real; a property "
            "not violated so far is unknown: it may still fail deeper."
        )
    cols = st.columns(4)
    cols[0].metric("states", f"{exploration.states:,}")
    cols[1].metric("transitions", f"{exploration.transitions:,}")
    cols[2].metric("depth", exploration.depth)
    cols[3].metric("seconds", f"{exploration.seconds:.2f}")
    rows = verdict_rows({"this design": exploration})
    st.dataframe(rows, hide_index=True)


def _counterexamples(design: Design, bounds: Bounds, exploration: Exploration) -> None:
    """A chooser of violated properties and the chosen counterexample on the timeline."""
    names = violated(exploration)
    if not names:
        st.success("No property is violated in the explored runs.")
        return
    st.subheader("Counterexamples")
    chosen = st.radio(
        "Violated property",
        list(names),
        format_func=lambda n: f"{n}, {BY_NAME[n].title} ({exploration.verdicts[n].shortest} steps)",
        key="cex",
        horizontal=True,
        index=list(names).index(st.query_params["cex"])
        if st.query_params.get("cex") in names
        else 0,
        on_change=lambda: st.query_params.update(cex=st.session_state["cex"], step="0"),
    )
    name = chosen if chosen in names else names[0]
    if st.query_params.get("cex") != name:
        st.query_params["cex"] = name
    verdict = exploration.verdicts[name]
    trace = replay_cached(design, bounds, verdict.actions or (), f"Shortest {name} counterexample")
    step = trace.first_violation(name)
    st.markdown(f"**{name}: {BY_NAME[name].statement}**")
    if step is not None:
        st.error(step.reason(name) or step.sentence)
    st.download_button(
        "Download this trace (JSON)",
        trace_to_json(trace),
        file_name=file_name(design, name, "json"),
        mime="application/json",
        key=f"download-{name}",
        icon=":material/download:",
    )
    st.download_button(
        "Download this trace (ITF)",
        trace_to_itf_json(trace),
        file_name=file_name(design, name, "itf.json"),
        mime="application/json",
        key=f"download-itf-{name}",
        icon=":material/download:",
    )
    show_traces([trace], param="step", key=f"explore-{name}")


def render_explore() -> None:
    """The whole page."""
    st.title("Explore a design")
    st.markdown(
        "Choose a design and bounds; the explorer checks every interleaving of every action "
        "within the bounds and reports each property with the shortest run that breaks it. "
        "The options and bounds are kept in the page's link, so a copied link reopens this "
        "exact page."
    )
    options, sizes = _form()
    try:
        design = design_from_values(options)
        budget = int(sizes.pop("budget"))
        bounds = bounds_from_values(sizes)
        design.check_fits(bounds)
    except DesignError as error:
        st.error(f"This design is not valid: {escape_markdown(str(error))}")
        return
    _write_url(design, bounds, budget)
    preset = matching_preset(design)
    label = f"the preset `{preset}`" if preset else f"a custom design ({design.in_words()})"
    st.markdown(f"This is {label} at {bounds.in_words()}.")
    caption = st.empty()
    st.button("Run the explorer", type="primary", on_click=_run, key="run-button")
    exploration = None
    if st.query_params.get("run") == "1":
        with heavy_work("the exploration") as admitted:
            if not admitted:
                return
            try:
                exploration = explore_cached(design, bounds, max_states=budget)
            except DesignError as error:
                st.error(f"These bounds cannot be explored: {escape_markdown(str(error))}")
                return
    if preset:
        verdicts = exploration.verdicts if exploration else None
        lesson = lesson_caption(PRESETS[preset].as_lesson(), bounds, verdicts)
        caption.caption(f"Mirrors {PRESETS[preset].mirrors}. {lesson}")
    if exploration is None:
        return
    _summary(exploration)
    _counterexamples(design, bounds, exploration)
