"""The state space page: how many states a design has, by depth, with and without symmetry,
and, for small bounds, the whole reachable graph with a counterexample highlighted."""

from __future__ import annotations

import networkx as nx
import streamlit as st

from model.design import REFERENCE_BOUNDS, Bounds, Design
from webapp.content import state_space as words
from webapp.draw.state_graph import depth_figure, graph_figure
from webapp.jobs.shared_results import ResultKey
from webapp.screens.cache import when_free
from webapp.screens.preset_picker import choose, show_command
from webapp.show.state_space import (
    GraphTooLarge,
    SpaceCounts,
    build_graph,
    count_space,
    kind_counts,
    neighbourhood_graph,
    path_keys,
    smaller_drawable,
)

SMALL_BOUNDS = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
"""The page's starting bounds: the core's first reference figure (354 states lease-only)."""


def counts_when_free(design: Design, bounds: Bounds) -> SpaceCounts | None:
    """The explorer's counts, once per design and bounds for every visitor (budgeted, so
    never unbounded), made under a heavy-work slot when nobody has them yet (None: busy)."""

    def compute() -> SpaceCounts:
        with st.spinner(words.COUNTING):
            return count_space(design, bounds)

    return when_free(ResultKey("space counts", (design, bounds)), compute, words.COUNT_WORK)


@st.cache_resource(show_spinner=words.BUILDING, max_entries=16)
def graph_cached(design: Design, bounds: Bounds) -> nx.DiGraph:
    """The reachable graph, built once per design and bounds and never mutated by the page."""
    return build_graph(design, bounds)


def _counts(counts: SpaceCounts) -> None:
    """The numbers, symmetry's effect, and the per-depth chart."""
    if (stopped := words.count_stopped(counts)) is not None:
        st.warning(stopped)
    cols = st.columns(4)
    cols[0].metric("reachable states", f"{counts.states:,}")
    cols[1].metric("transitions", f"{counts.transitions:,}")
    cols[2].metric("depth", counts.depth)
    cols[3].metric(words.ORBITS, f"{counts.orbits:,}")
    st.markdown(words.symmetry_reduction(counts))
    st.plotly_chart(depth_figure(counts), width="stretch", key="space-depths")


@st.cache_data(show_spinner=words.LOOKING_SMALLER, max_entries=64)
def smaller_cached(design: Design, bounds: Bounds) -> Bounds | None:
    """Smaller bounds of the same design whose graph can be drawn, once per design and bounds."""
    return smaller_drawable(design, bounds)


def _use_bounds(bounds: Bounds) -> None:
    """Button callback: switch the page to other bounds."""
    for name, value in bounds.to_dict().items():
        st.session_state[f"space-{name}"] = value


def _too_big(design: Design, bounds: Bounds, prop: str, counts: SpaceCounts) -> None:
    """What to show instead of a graph too big to draw: smaller bounds, or one run's states."""
    st.info(words.not_drawn(counts))
    smaller = smaller_cached(design, bounds)
    if smaller is not None:
        st.button(
            words.draw_at(smaller),
            on_click=_use_bounds,
            args=(smaller,),
            key="space-smaller",
        )
    actions = counts.counterexamples.get(prop, ())
    if not actions:
        return
    st.markdown(words.run_and_neighbours(prop, actions))
    graph = neighbourhood_graph(design, bounds, actions)
    path = path_keys(design, bounds, actions)
    st.caption(words.states_drawn(graph.number_of_nodes()))
    st.plotly_chart(
        graph_figure(graph, design, bounds, prop, path), width="stretch", key="space-run-graph"
    )


def _graph(design: Design, bounds: Bounds, prop: str, counts: SpaceCounts) -> None:
    """The drawn graph with the chosen property's shortest counterexample highlighted."""
    try:
        graph = graph_cached(design, bounds)
    except GraphTooLarge as error:
        st.info(str(error))
        return
    actions = counts.counterexamples.get(prop, ())
    path = path_keys(design, bounds, actions) if actions else ()
    if path:
        st.markdown(words.purple_line(prop, actions))
    elif (holds := words.holds_in_graph(prop, counts)) is not None:
        st.success(holds)
    kinds = kind_counts(graph, prop)
    st.caption(words.kinds_line(kinds))
    st.plotly_chart(
        graph_figure(graph, design, bounds, prop, path), width="stretch", key="space-graph"
    )


def render_state_space() -> None:
    """The whole page."""
    st.title("The state space")
    st.markdown(words.INTRO)
    st.caption(words.smaller_start(SMALL_BOUNDS, REFERENCE_BOUNDS))
    choice = choose("space", "lease-only", SMALL_BOUNDS, prop="P2")
    if choice is None:
        return
    design, bounds, prop = choice.design, choice.bounds, choice.prop
    show_command(design, bounds)
    counts = counts_when_free(design, bounds)
    if counts is None:
        return
    _counts(counts)
    st.subheader("The graph")
    if not counts.drawable:
        _too_big(design, bounds, prop, counts)
        return
    _graph(design, bounds, prop, counts)
