"""Unit tests of the state-graph logic: counts, the networkx graph, kinds, path, figures."""

from __future__ import annotations

import itertools

import pytest

from model.design import Bounds
from model.presets import PRESETS
from webapp.draw.state_graph import depth_figure, graph_figure
from webapp.show.state_space import (
    DOOMED,
    GRAPH_NODE_LIMIT,
    SAFE,
    VIOLATING_EXIT,
    GraphTooLarge,
    build_graph,
    count_space,
    kind_counts,
    layered_positions,
    node_kinds,
    path_keys,
)

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
LEASE_ONLY = PRESETS["lease-only"].design
FENCING = PRESETS["fencing"].design


def test_counts_match_the_reference_figures() -> None:
    counts = count_space(LEASE_ONLY, SMALL)
    assert (counts.states, counts.transitions, counts.depth, counts.orbits) == (354, 728, 12, 186)
    assert sum(counts.level_sizes) == 354 and sum(counts.orbit_level_sizes) == 186
    assert counts.drawable and counts.shortest["P2"] == 5
    assert "354 states, 186 up to renaming" in counts.reduction()


def test_graph_has_every_state_and_transition_of_the_explorer() -> None:
    graph = build_graph(FENCING, SMALL)
    assert graph.number_of_nodes() == 321
    assert graph.number_of_edges() == 668
    assert max(depth for _, depth in graph.nodes(data="depth")) == 11


def test_graph_refuses_more_than_the_limit() -> None:
    with pytest.raises(GraphTooLarge, match="more than 100 reachable states"):
        build_graph(FENCING, SMALL, limit=100)
    big = count_space(FENCING, Bounds(3, 2, 6, 3, 2))
    assert big.states > GRAPH_NODE_LIMIT and not big.drawable


def test_kinds_follow_the_property() -> None:
    graph = build_graph(LEASE_ONLY, SMALL)
    kinds = node_kinds(graph, "P2")
    initial = next(n for n, d in graph.nodes(data="depth") if d == 0)
    assert kinds[initial] == DOOMED
    for u, _, data in graph.edges(data=True):
        if "P2" in data["violations"]:
            assert kinds[u] == VIOLATING_EXIT
    assert set(node_kinds(build_graph(FENCING, SMALL), "P1").values()) == {SAFE}
    assert sum(kind_counts(graph, "P2").values()) == 354


def test_counterexample_path_runs_along_edges_and_ends_in_a_violation() -> None:
    counts = count_space(LEASE_ONLY, SMALL)
    graph = build_graph(LEASE_ONLY, SMALL)
    path = path_keys(LEASE_ONLY, SMALL, counts.counterexamples["P1"])
    assert len(path) == counts.shortest["P1"] + 1 == 9
    for u, v in itertools.pairwise(path):
        assert graph.has_edge(u, v)
    assert "P1" in graph.edges[path[-2], path[-1]]["violations"]


def test_figures_have_one_edge_trace_and_one_node_trace() -> None:
    graph = build_graph(LEASE_ONLY, SMALL)
    counts = count_space(LEASE_ONLY, SMALL)
    path = path_keys(LEASE_ONLY, SMALL, counts.counterexamples["P2"])
    figure = graph_figure(graph, LEASE_ONLY, SMALL, "P2", path)
    edges, highlighted, nodes = figure.data[:3]
    assert edges.mode == "lines" and list(edges.x).count(None) == graph.number_of_edges()
    assert len(nodes.x) == 354 and "x" in nodes.marker.symbol
    assert len(highlighted.x) == 6
    positions = layered_positions(graph)
    assert all(x == graph.nodes[n]["depth"] for n, (x, _) in positions.items())
    bars = depth_figure(counts)
    assert list(bars.data[0].y) == list(counts.level_sizes)


def test_graph_edges_agree_with_the_step_interpreter() -> None:
    from model.system import System

    system = System(LEASE_ONLY, SMALL)
    graph = build_graph(LEASE_ONLY, SMALL)
    for node, state in graph.nodes(data="state"):
        expected = {}
        for successor in system.successors(state):
            key = system.layout.pack(successor.state)
            expected.setdefault(key, set()).update(successor.violations)
        assert set(graph.successors(node)) == set(expected)
        for key, names in expected.items():
            assert set(graph.edges[node, key]["violations"]) == names
