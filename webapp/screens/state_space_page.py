"""The state space page: how many states a design has, by depth, with and without symmetry,
and, for small bounds, the whole reachable graph with a counterexample highlighted."""

from __future__ import annotations

from typing import Final

import networkx as nx
import streamlit as st

from model.design import REFERENCE_BOUNDS, Bounds, Design
from webapp.draw.state_graph import depth_figure, graph_figure
from webapp.screens.limits import heavy_work
from webapp.screens.preset_picker import choose, show_command
from webapp.show.state_space import (
    GRAPH_NODE_LIMIT,
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
SMALLER_START: Final = (
    f"This page starts at smaller bounds ({SMALL_BOUNDS.short()}) than the other pages "
    f"({REFERENCE_BOUNDS.short()}, where the presets' lessons are checked), so that every "
    "state can be drawn; set the bounds below to compare."
)
"""Why the page's starting bounds differ from every other page's."""


@st.cache_data(show_spinner="Counting the reachable states…", max_entries=64)
def counts_cached(design: Design, bounds: Bounds) -> SpaceCounts:
    """The explorer's counts, once per design and bounds (budgeted, so never unbounded)."""
    return count_space(design, bounds)


@st.cache_resource(show_spinner="Building the state graph…", max_entries=16)
def graph_cached(design: Design, bounds: Bounds) -> nx.DiGraph:
    """The reachable graph, built once per design and bounds and never mutated by the page."""
    return build_graph(design, bounds)


def _counts(counts: SpaceCounts) -> None:
    """The numbers, symmetry's effect, and the per-depth chart."""
    if not counts.complete:
        st.warning(
            f"The count stopped early ({counts.stopped_by}): the numbers below count only "
            f"the states reached in the first {counts.depth} steps of the search, not the "
            "deeper ones."
        )
    cols = st.columns(4)
    cols[0].metric("reachable states", f"{counts.states:,}")
    cols[1].metric("transitions", f"{counts.transitions:,}")
    cols[2].metric("depth", counts.depth)
    cols[3].metric("up to renaming workers", f"{counts.orbits:,}")
    st.markdown(f"**Symmetry reduction:** {counts.reduction()}.")
    st.plotly_chart(depth_figure(counts), width="stretch", key="space-depths")


@st.cache_data(show_spinner="Looking for smaller bounds that can be drawn…", max_entries=64)
def smaller_cached(design: Design, bounds: Bounds) -> Bounds | None:
    """Smaller bounds of the same design whose graph can be drawn, once per design and bounds."""
    return smaller_drawable(design, bounds)


def _use_bounds(bounds: Bounds) -> None:
    """Button callback: switch the page to other bounds."""
    for name, value in bounds.to_dict().items():
        st.session_state[f"space-{name}"] = value


def _too_big(design: Design, bounds: Bounds, prop: str, counts: SpaceCounts) -> None:
    """What to show instead of a graph too big to draw: smaller bounds, or one run's states."""
    reason = (
        f"{counts.states:,} states is more than the {GRAPH_NODE_LIMIT:,} this page draws"
        if counts.complete
        else "the count did not finish"
    )
    st.info(f"The whole graph is not drawn: {reason}.")
    smaller = smaller_cached(design, bounds)
    if smaller is not None:
        st.button(
            f"Draw the same design at {smaller.in_words()}",
            on_click=_use_bounds,
            args=(smaller,),
            key="space-smaller",
        )
    actions = counts.counterexamples.get(prop, ())
    if not actions:
        return
    st.markdown(
        f"**The shortest run violating {prop}, and every state one step away from it** "
        f"({len(actions)} steps): " + " → ".join(a.label() for a in actions)
    )
    graph = neighbourhood_graph(design, bounds, actions)
    path = path_keys(design, bounds, actions)
    st.caption(
        f"{graph.number_of_nodes():,} states drawn; a state's colour speaks only of the steps "
        "drawn here."
    )
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
        st.markdown(
            f"The purple line is the shortest run violating **{prop}** ({len(actions)} steps): "
            + " → ".join(a.label() for a in actions)
        )
    else:
        st.success(f"{prop} holds within these bounds: no state has a violating step leaving it.")
    kinds = kind_counts(graph, prop)
    st.caption(" · ".join(f"{count:,} states: {word}" for word, count in kinds.items()))
    st.plotly_chart(
        graph_figure(graph, design, bounds, prop, path), width="stretch", key="space-graph"
    )


def render_state_space() -> None:
    """The whole page."""
    st.title("The state space")
    st.markdown(
        "Every state the model can reach from the initial one, laid out by breadth-first "
        "depth. A state is marked by what it means for the chosen property: a violating "
        "step leaves it (red ✕), a violation can still be reached from it (orange ▲), or "
        f"it is safe (green ●). Graphs of up to {GRAPH_NODE_LIMIT:,} states are drawn; "
        "above that the page shows the counts and the chart only."
    )
    st.caption(SMALLER_START)
    choice = choose("space", "lease-only", SMALL_BOUNDS, prop="P2")
    if choice is None:
        return
    design, bounds, prop = choice.design, choice.bounds, choice.prop
    show_command(design, bounds)
    with heavy_work("the count") as admitted:
        if not admitted:
            return
        counts = counts_cached(design, bounds)
    _counts(counts)
    st.subheader("The graph")
    if not counts.drawable:
        _too_big(design, bounds, prop, counts)
        return
    _graph(design, bounds, prop, counts)
