"""The state space page: how many states a design has, by depth, with and without symmetry,
and, for small bounds, the whole reachable graph with a counterexample highlighted."""

from __future__ import annotations

import networkx as nx
import streamlit as st

from model.design import Bounds, Design
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from webapp.preset_picker import bounds_inputs, checked_design
from webapp.state_graph import (
    GRAPH_NODE_LIMIT,
    GraphTooLarge,
    SpaceCounts,
    build_graph,
    count_space,
    depth_figure,
    graph_figure,
    kind_counts,
    path_keys,
)

SMALL_BOUNDS = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
"""The page's starting bounds: the core's first reference figure (354 states lease-only)."""


@st.cache_data(show_spinner="Counting the reachable states…", max_entries=64)
def counts_cached(design: Design, bounds: Bounds) -> SpaceCounts:
    """The explorer's counts, once per design and bounds (budgeted, so never unbounded)."""
    return count_space(design, bounds)


@st.cache_resource(show_spinner="Building the state graph…", max_entries=16)
def graph_cached(design: Design, bounds: Bounds) -> nx.DiGraph:
    """The reachable graph, built once per design and bounds and never mutated by the page."""
    return build_graph(design, bounds)


def _choose() -> tuple[Design, Bounds, str] | None:
    """The design, bounds and property widgets; None (with an error shown) when invalid."""
    names = list(PRESETS)
    cols = st.columns([2, 2])
    preset = cols[0].selectbox("Design", names, index=names.index("lease-only"), key="space-preset")
    prop = cols[1].selectbox(
        "Colour states by property",
        PROPERTY_NAMES,
        index=1,
        format_func=lambda n: f"{n}, {BY_NAME[n].title}",
        key="space-prop",
    )
    chosen = checked_design(preset, bounds_inputs(SMALL_BOUNDS, "space"))
    if chosen is None:
        return None
    return (*chosen, prop)


def _counts(counts: SpaceCounts) -> None:
    """The numbers, symmetry's effect, and the per-depth chart."""
    if not counts.complete:
        st.warning(
            f"The count stopped early ({counts.stopped_by}): the numbers below are a lower bound."
        )
    cols = st.columns(4)
    cols[0].metric("reachable states", f"{counts.states:,}")
    cols[1].metric("transitions", f"{counts.transitions:,}")
    cols[2].metric("depth", counts.depth)
    cols[3].metric("up to renaming workers", f"{counts.orbits:,}")
    st.markdown(f"**Symmetry reduction:** {counts.reduction()}.")
    st.plotly_chart(depth_figure(counts), width="stretch", key="space-depths")


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
    chosen = _choose()
    if chosen is None:
        return
    design, bounds, prop = chosen
    counts = counts_cached(design, bounds)
    _counts(counts)
    st.subheader("The graph")
    if not counts.drawable:
        reason = (
            f"{counts.states:,} states is more than the {GRAPH_NODE_LIMIT:,} this page draws"
            if counts.complete
            else "the count did not finish"
        )
        st.info(f"The graph is not drawn: {reason}. Lower the bounds to see it.")
        return
    _graph(design, bounds, prop, counts)
