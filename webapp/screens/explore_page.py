"""The explore page: a design form bound to the URL, the exploration, verdicts, counterexamples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from fencing.command_line import bounds_flags, command, design_flags
from fencing.strategies import (
    BREADTH_FIRST,
    HYPOTHESIS,
    RANDOM,
    RUNS_SEARCHES,
    states_figure,
    unknown_words,
)
from model.check.explorer import Exploration
from model.check.random_search import RandomSearch
from model.claims import lesson_caption
from model.design import BOUND_LIMITS, BY_BOUND, REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.formats.itf import trace_to_itf_json
from model.formats.trace import trace_to_json
from model.presets import PRESET_NAMES, PRESETS
from model.properties import BY_NAME
from model.verdicts import PropertyVerdict, Status
from webapp.content import explore
from webapp.content.common import link_not_understood
from webapp.screens import url_state
from webapp.screens.cache import (
    WEB_MAX_RUNS,
    WEB_MAX_SECONDS,
    WEB_MAX_STATES,
    explore_cached,
    random_search_cached,
    replay_cached,
)
from webapp.screens.limits import heavy_work
from webapp.screens.option_widgets import option_input
from webapp.screens.player import show_traces
from webapp.show.design_form import (
    CUSTOM,
    OPTION_FIELDS,
    bounds_from_values,
    design_from_values,
    values_of,
)
from webapp.show.downloads import offer_download
from webapp.show.links import (
    LinkError,
    bounds_from_params,
    bounds_params,
    design_from_params,
    design_params,
    file_name,
    matching_preset,
    whole_number,
)
from webapp.show.style import STATUS_GLYPHS, verdict_label
from webapp.show.text import escape_markdown
from webapp.show.verdicts import property_rows

MIN_BUDGET = 1_000
"""Smallest state budget the page accepts."""
DEFAULT_RUNS = 200
"""Random runs per property the page offers first."""
MAX_SEED = 2**31 - 1
STRATEGIES = (BREADTH_FIRST, RANDOM, HYPOTHESIS)
"""The page's search strategies (the reference search is for the command line)."""

SEARCH_KEYS = ("strategy", "runs", "seed")
"""Session keys (and link parameters) of the search strategy's widgets."""
FORM_KEYS = (
    *(o.name for o in OPTION_FIELDS),
    *BOUND_LIMITS,
    "budget",
    "preset_choice",
    "strategy",
)
"""Session keys of the form's widgets that every run shows (runs and seed only show for a
search by random runs, and lose their session value while hidden)."""

RESULT_PARAMS = ("run", "cex", "step")
"""URL parameters that belong to one set of results, dropped when the form changes."""


def _url_state() -> tuple[Design, Bounds, int, list[str]]:
    """The design, bounds and budget a link asks for, with what was wrong in it.

    A bad value is reported and replaced by the default, so a mistyped link still opens
    a working page.
    """
    problems = []
    params = url_state.read()
    try:
        design = design_from_params(params)
    except LinkError as error:
        design, problems = Design(), [str(error)]
    try:
        bounds = bounds_from_params(params, REFERENCE_BOUNDS)
    except LinkError as error:
        bounds = REFERENCE_BOUNDS
        problems.append(str(error))
    budget = WEB_MAX_STATES
    if (text := params.get("budget")) is not None:
        try:
            budget = whole_number(text[:20], "budget", MIN_BUDGET, WEB_MAX_STATES)
        except LinkError as error:
            problems.append(str(error))
    return design, bounds, budget, problems


def _search_from_url(problems: list[str]) -> dict[str, Any]:
    """The strategy, runs and seed a link asks for (bad values reported, defaults kept)."""
    search: dict[str, Any] = {"strategy": BREADTH_FIRST, "runs": DEFAULT_RUNS, "seed": 0}
    if (strategy := url_state.get("strategy")) in RUNS_SEARCHES:
        search["strategy"] = strategy
    elif url_state.has("strategy"):
        problems.append(explore.strategy_not_known(STRATEGIES))
    for key, high in (("runs", WEB_MAX_RUNS), ("seed", MAX_SEED)):
        if (text := url_state.get(key)) is not None:
            try:
                search[key] = whole_number(text[:20], key, 1 if key == "runs" else 0, high)
            except LinkError as error:
                problems.append(str(error))
    return search


def _fill_form_from_url() -> None:
    """On a fresh page, put the link's design, bounds, budget and search into the widgets."""
    if all(key in st.session_state for key in FORM_KEYS):
        return
    design, bounds, budget, problems = _url_state()
    st.session_state.update(_search_from_url(problems))
    for key, value in values_of(design).items():
        st.session_state[key] = value
    for name in BOUND_LIMITS:
        st.session_state[name] = getattr(bounds, name)
    st.session_state["budget"] = budget
    st.session_state["preset_choice"] = matching_preset(design) or CUSTOM
    for problem in problems:
        st.error(link_not_understood(escape_markdown(problem)))


def _write_url(design: Design, bounds: Bounds, budget: int, search: dict[str, Any]) -> None:
    """Keep the whole form in the URL, plus the results parameters that still apply."""
    kept = {key: value for key in RESULT_PARAMS if (value := url_state.get(key)) is not None}
    params = {**design_params(design), **bounds_params(bounds)}
    if budget != WEB_MAX_STATES:
        params["budget"] = str(budget)
    if search.get("strategy") in RUNS_SEARCHES:
        params.update({key: str(search[key]) for key in SEARCH_KEYS})
    if url_state.read() != {**params, **kept}:
        url_state.replace({**params, **kept})


def _results_stale() -> None:
    """Any change to the form hides the previous results until Run is pressed again."""
    for key in RESULT_PARAMS:
        if url_state.has(key):
            url_state.drop(key)


def _apply_preset() -> None:
    """Copy the chosen preset's options into the form's widgets."""
    name = st.session_state.get("preset_choice")
    if name in PRESETS:
        for key, value in values_of(PRESETS[name].design).items():
            st.session_state[key] = value
    _results_stale()


def _run() -> None:
    """Remember in the URL that the visitor asked for results."""
    url_state.put(run="1")


def _form() -> tuple[dict[str, Any], dict[str, Any]]:
    """The preset chooser, the option widgets and the bound widgets; returns their values."""
    _fill_form_from_url()
    st.selectbox(
        explore.PRESET_LABEL,
        [CUSTOM, *PRESET_NAMES],
        key="preset_choice",
        on_change=_apply_preset,
        help=explore.PRESET_HELP,
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
        st.caption(explore.limits_caption())
        for name, (low, high) in BOUND_LIMITS.items():
            sizes[name] = st.number_input(
                BY_BOUND[name].widget_label,
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
            help=explore.budget_help(WEB_MAX_SECONDS),
        )
        _strategy_inputs(sizes)
    return options, sizes


def _strategy_inputs(sizes: dict[str, Any]) -> None:
    """The search strategy, and for a search by random runs its runs per property and seed."""
    st.session_state.setdefault("runs", DEFAULT_RUNS)
    st.session_state.setdefault("seed", 0)
    sizes["strategy"] = st.radio(
        "Strategy",
        STRATEGIES,
        key="strategy",
        horizontal=True,
        on_change=_results_stale,
        help=explore.STRATEGY_HELP,
    )
    if sizes["strategy"] in RUNS_SEARCHES:
        sizes["runs"] = st.number_input(
            explore.runs_label(WEB_MAX_RUNS),
            min_value=1,
            max_value=WEB_MAX_RUNS,
            step=100,
            key="runs",
            on_change=_results_stale,
        )
        sizes["seed"] = st.number_input(
            f"Seed (0..{MAX_SEED:,})",
            min_value=0,
            max_value=MAX_SEED,
            step=1,
            key="seed",
            on_change=_results_stale,
            help=explore.SEED_HELP,
        )


def _summary(exploration: Exploration) -> None:
    """Counts, completeness and the verdict table."""
    if (stopped := explore.incomplete(exploration)) is not None:
        st.warning(stopped)
    cols = st.columns(4)
    cols[0].metric("states", f"{exploration.states:,}")
    cols[1].metric("transitions", f"{exploration.transitions:,}")
    cols[2].metric("depth", exploration.depth)
    cols[3].metric("seconds", f"{exploration.seconds:.2f}")
    st.table(property_rows({explore.VERDICT_COLUMN: exploration}), hide_index=True)


def random_rows(found: RandomSearch) -> list[dict[str, str]]:
    """The verdict table of a random or Hypothesis search, a row per property: violated with
    the run's length, or unknown with the runs and steps tried (neither ever says holds)."""
    rows = []
    for name, verdict in found.verdicts.items():
        tried = found.tried[name]
        said = (
            verdict_label(Status.VIOLATED, verdict.shortest)
            if verdict.violated
            else f"{STATUS_GLYPHS[Status.UNKNOWN]} "
            f"{unknown_words(tried.runs, tried.steps, found.strategy)}"
        )
        rows.append({"property": f"{name}, {BY_NAME[name].title}", explore.VERDICT_COLUMN: said})
    return rows


def _random_summary(found: RandomSearch) -> None:
    """Runs, steps and states of a random or Hypothesis search, and its verdict table."""
    if (stopped := explore.random_stopped(found)) is not None:
        st.warning(stopped)
    cols = st.columns(4)
    cols[0].metric("runs", f"{sum(t.runs for t in found.tried.values()):,}")
    cols[1].metric("steps", f"{found.steps:,}")
    cols[2].metric("distinct states met", states_figure(found))
    cols[3].metric("seconds", f"{found.seconds:.2f}")
    st.table(random_rows(found), hide_index=True)
    st.caption(explore.random_not_complete(found.stopped_by, found.strategy))


def _counterexamples(
    design: Design,
    bounds: Bounds,
    verdicts: Mapping[str, PropertyVerdict],
    kind: str = "Shortest",
) -> None:
    """A chooser of violated properties and the chosen counterexample on the timeline."""
    if (none_violated := explore.none_violated(verdicts)) is not None:
        st.success(none_violated)
        return
    names = tuple(name for name, verdict in verdicts.items() if verdict.violated)
    st.subheader("Counterexamples")
    linked = url_state.get("cex")
    chosen = st.radio(
        "Violated property",
        list(names),
        format_func=lambda n: explore.violated_choice(n, verdicts[n]),
        key="cex",
        horizontal=True,
        index=names.index(linked) if linked in names else 0,
        on_change=lambda: url_state.put(cex=st.session_state["cex"], step="0"),
    )
    name = chosen if chosen in names else names[0]
    if url_state.get("cex") != name:
        url_state.put(cex=name)
    verdict = verdicts[name]
    title = explore.counterexample_title(kind, name)
    trace = replay_cached(design, bounds, verdict.actions or (), title)
    step = trace.first_violation(name)
    st.markdown(f"**{name}: {BY_NAME[name].statement}**")
    if step is not None:
        st.error(step.reason(name) or step.sentence)
    offer_download(
        None,
        explore.DOWNLOAD_JSON,
        trace_to_json(trace),
        file_name=file_name(design, name, "json"),
        mime="application/json",
        key=f"download-{name}",
    )
    offer_download(
        None,
        explore.DOWNLOAD_ITF,
        trace_to_itf_json(trace),
        file_name=file_name(design, name, "itf.json"),
        mime="application/json",
        key=f"download-itf-{name}",
    )
    show_traces([trace], param="step", key=f"explore-{name}")


def render_explore() -> None:
    """The whole page."""
    st.title("Explore a design")
    st.markdown(explore.INTRO)
    options, sizes = _form()
    try:
        design = design_from_values(options)
        budget = int(sizes.pop("budget"))
        bounds = bounds_from_values(sizes)
        design.check_fits(bounds)
    except DesignError as error:
        st.error(explore.not_valid(escape_markdown(str(error))))
        return
    _write_url(design, bounds, budget, sizes)
    preset = matching_preset(design)
    st.markdown(explore.this_is(preset, design, bounds))
    _command_line(design, bounds, budget, sizes)
    caption = st.empty()
    st.button("Run the explorer", type="primary", on_click=_run, key="run-button")
    if (strategy := sizes.get("strategy")) in RUNS_SEARCHES:
        if preset:
            lesson = lesson_caption(PRESETS[preset].as_lesson(), bounds, None)
            caption.caption(explore.preset_caption(PRESETS[preset], lesson))
        _random_results(design, bounds, int(sizes["runs"]), int(sizes["seed"]), str(strategy))
        return
    exploration = None
    if url_state.get("run") == "1":
        with heavy_work(explore.EXPLORATION_WORK) as admitted:
            if not admitted:
                return
            try:
                exploration = explore_cached(design, bounds, max_states=budget)
            except DesignError as error:
                st.error(explore.cannot_explore(escape_markdown(str(error))))
                return
    if preset:
        verdicts = exploration.verdicts if exploration else None
        lesson = lesson_caption(PRESETS[preset].as_lesson(), bounds, verdicts)
        caption.caption(explore.preset_caption(PRESETS[preset], lesson))
    if exploration is None:
        return
    _summary(exploration)
    _counterexamples(design, bounds, exploration.verdicts)


def _command_line(design: Design, bounds: Bounds, budget: int, sizes: dict[str, Any]) -> None:
    """The `fencing check` command that runs the same search, folded away."""
    words = ["fencing", "check", *design_flags(design), *bounds_flags(bounds)]
    if sizes.get("strategy") in RUNS_SEARCHES:
        words += [
            "--strategy",
            str(sizes["strategy"]),
            "--runs",
            str(sizes["runs"]),
            "--seed",
            str(sizes["seed"]),
        ]
    elif budget != WEB_MAX_STATES:
        words += ["--max-states", str(budget)]
    with st.expander(explore.COMMAND_LINE):
        st.code(command(words), language="bash")


def _random_results(design: Design, bounds: Bounds, runs: int, seed: int, strategy: str) -> None:
    """Run the random or Hypothesis search when asked, then show its table and the runs it
    found."""
    if url_state.get("run") != "1":
        return
    with heavy_work(explore.search_work(strategy)) as admitted:
        if not admitted:
            return
        try:
            found = random_search_cached(design, bounds, runs, seed, strategy)
        except DesignError as error:
            st.error(explore.cannot_search(escape_markdown(str(error))))
            return
    _random_summary(found)
    _counterexamples(design, bounds, found.verdicts, kind=explore.found_kind(strategy))
