"""The explore page: a design form bound to the URL, the exploration, verdicts, counterexamples."""

from __future__ import annotations

from typing import Any

import streamlit as st

from model.design import BOUND_LIMITS, Bounds, Design, DesignError
from model.explorer import Exploration
from model.itf import trace_to_itf_json
from model.layout import Layout
from model.presets import PRESET_NAMES, PRESETS
from model.properties import BY_NAME
from model.trace import trace_to_json
from webapp.cache import WEB_MAX_SECONDS, WEB_MAX_STATES, explore_cached, replay_cached
from webapp.design_form import (
    BOUND_HELP,
    CUSTOM,
    OPTION_FIELDS,
    OptionField,
    bounds_from_values,
    design_from_values,
    limits_text,
    matching_preset,
    values_of,
)
from webapp.player import show_traces
from webapp.verdicts import verdict_rows, violated

MIN_BUDGET = 1_000
"""Smallest state budget the page accepts."""


def _results_stale() -> None:
    """Any change to the form hides the previous results until Run is pressed again."""
    if "run" in st.query_params:
        del st.query_params["run"]


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


def _option_widget(option: OptionField) -> Any:
    """One design option's widget, bound to the URL under the option's name."""
    common: dict[str, Any] = {
        "key": option.name,
        "help": option.help,
        "bind": "query-params",
        "on_change": _results_stale,
    }
    core = values_of(Design())[option.name]
    # A default is given only until a preset has written the widget's value into the session.
    preset_set = option.name in st.session_state
    if option.kind == "choice":
        if preset_set:
            return st.selectbox(option.name, option.choices, **common)
        return st.selectbox(option.name, option.choices, option.choices.index(core), **common)
    default = {} if preset_set else {"value": core}
    if option.kind == "int":
        return st.number_input(
            option.name, min_value=option.low, max_value=option.high, step=1, **default, **common
        )
    if option.kind == "bool":
        return st.checkbox(option.name, **default, **common)
    return st.text_input(option.name, max_chars=40, **default, **common)


def _form() -> tuple[dict[str, Any], dict[str, Any]]:
    """The preset chooser, the option widgets and the bound widgets; returns their values."""
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
                options[option.name] = _option_widget(option)
    sizes: dict[str, Any] = {}
    with right:
        st.markdown("**Bounds**")
        st.caption(f"Limits: {limits_text()}.")
        core = Bounds()
        for name, (low, high) in BOUND_LIMITS.items():
            sizes[name] = st.number_input(
                f"{BOUND_HELP[name]} ({low}..{high})",
                min_value=low,
                max_value=high,
                value=getattr(core, name),
                step=1,
                key=name,
                bind="query-params",
                on_change=_results_stale,
            )
        sizes["budget"] = st.number_input(
            f"State budget ({MIN_BUDGET:,}..{WEB_MAX_STATES:,})",
            min_value=MIN_BUDGET,
            max_value=WEB_MAX_STATES,
            value=WEB_MAX_STATES,
            step=10_000,
            key="budget",
            bind="query-params",
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
        bind="query-params",
        horizontal=True,
        on_change=lambda: st.query_params.update(step="0"),
    )
    name = chosen if chosen in names else names[0]
    verdict = exploration.verdicts[name]
    trace = replay_cached(design, bounds, verdict.actions or (), f"Shortest {name} counterexample")
    step = trace.first_violation(name)
    st.markdown(f"**{name}: {BY_NAME[name].statement}**")
    if step is not None:
        st.error("\n\n".join(r for r in step.reasons if r.startswith(name)))
    st.download_button(
        "Download this trace (JSON)",
        trace_to_json(trace),
        file_name=f"counterexample-{name}.json",
        mime="application/json",
        key=f"download-{name}",
        icon=":material/download:",
    )
    st.download_button(
        "Download this trace (ITF)",
        trace_to_itf_json(trace),
        file_name=f"counterexample-{name}.itf.json",
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
        st.error(f"This design is not valid: {error}")
        return
    try:
        Layout.of(design, bounds)
    except DesignError as error:
        st.error(f"These bounds cannot be explored: {error}")
        return
    preset = matching_preset(design)
    label = f"the preset `{preset}`" if preset else f"a custom design ({design.label()})"
    st.markdown(f"This is {label} at {bounds.short()}.")
    if preset:
        st.caption(f"Mirrors {PRESETS[preset].mirrors}. {PRESETS[preset].lesson}")
    st.button("Run the explorer", type="primary", on_click=_run, key="run-button")
    if st.query_params.get("run") != "1":
        return
    try:
        exploration = explore_cached(design, bounds, max_states=budget)
    except DesignError as error:
        st.error(f"These bounds cannot be explored: {error}")
        return
    _summary(exploration)
    _counterexamples(design, bounds, exploration)
