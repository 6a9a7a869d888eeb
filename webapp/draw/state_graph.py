"""The reachable state graph of a small design: counts, a networkx graph and plotly figures.

`count_space` asks the explorer for the numbers (with and without symmetry reduction);
`build_graph` collects the explorer's transitions into a networkx graph when the space is
small enough to draw (`GRAPH_NODE_LIMIT`). Each state is coloured by what it
means for a chosen property: a violating transition leaves it, a violation can still be
reached from it, or it is safe. Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import networkx as nx
import plotly.graph_objects as go

from model.design import Bounds, Design, DesignError
from model.explorer import EdgeBatch, explore
from model.properties import PROPERTY_NAMES
from model.rules import Action
from model.search import OnEdges, SearchOptions
from model.system import State, System
from model.trace import replay

GRAPH_NODE_LIMIT: Final = 2_000
"""Largest state graph drawn; above it the page shows only the counts and the depth chart."""

COUNT_MAX_STATES: Final = 500_000
COUNT_MAX_SECONDS: Final = 15.0
"""Budget of the exploration behind the counts, so a big design cannot hold a page up."""


@dataclass(frozen=True)
class NodeKind:
    """How a state looks for the chosen property: word, plotly symbol, colour."""

    key: str
    word: str
    symbol: str
    colour: str


VIOLATING_EXIT: Final = NodeKind("exit", "a violating step leaves this state", "x", "#c62828")
DOOMED: Final = NodeKind("doomed", "a violation can still be reached", "triangle-up", "#ef6c00")
SAFE: Final = NodeKind("safe", "no violation reachable from here", "circle", "#2e7d32")
NODE_KINDS: Final = (VIOLATING_EXIT, DOOMED, SAFE)
PATH_COLOUR: Final = "#8e24aa"
EDGE_COLOUR: Final = "#c8c8c8"


@dataclass(frozen=True)
class SpaceCounts:
    """How big a design's reachable space is, with and without symmetry reduction."""

    states: int
    transitions: int
    depth: int
    level_sizes: tuple[int, ...]
    orbits: int
    orbit_level_sizes: tuple[int, ...]
    complete: bool
    stopped_by: str | None
    shortest: dict[str, int | None]
    counterexamples: dict[str, tuple[Action, ...]]

    @property
    def drawable(self) -> bool:
        """Whether the graph is small enough (and known completely) to draw."""
        return self.complete and self.states <= GRAPH_NODE_LIMIT

    def reduction(self) -> str:
        """Symmetry's effect in words, e.g. `354 states, 186 up to renaming workers (1.9x)`.

        When a count stopped at its budget, only what was counted is said: both numbers are
        then lower bounds of different searches, and their ratio means nothing.
        """
        if not self.complete:
            return (
                f"the count stopped at its budget ({self.stopped_by}): at least "
                f"{self.states:,} states and at least {self.orbits:,} up to renaming the "
                f"workers were reached, in the first {self.depth} steps of the search; deeper "
                "states were not counted, so the saving from symmetry is not known"
            )
        factor = self.states / self.orbits if self.orbits else 1.0
        return (
            f"{self.states:,} states, {self.orbits:,} up to renaming the workers "
            f"({factor:.1f}x fewer)"
        )


def count_space(
    design: Design,
    bounds: Bounds,
    max_states: int = COUNT_MAX_STATES,
    max_seconds: float = COUNT_MAX_SECONDS,
) -> SpaceCounts:
    """Explore the design twice (plain, then with symmetry) within a budget; report the numbers."""
    plain = explore(design, bounds, SearchOptions(max_states=max_states, max_seconds=max_seconds))
    reduced = explore(
        design, bounds, SearchOptions(symmetry=True, max_states=max_states, max_seconds=max_seconds)
    )
    return SpaceCounts(
        states=plain.states,
        transitions=plain.transitions,
        depth=plain.depth,
        level_sizes=plain.level_sizes,
        orbits=reduced.states,
        orbit_level_sizes=reduced.level_sizes,
        complete=plain.complete and reduced.complete,
        stopped_by=plain.stopped_by or reduced.stopped_by,
        shortest={name: v.shortest for name, v in plain.verdicts.items()},
        counterexamples={name: tuple(v.actions) for name, v in plain.verdicts.items() if v.actions},
    )


class GraphTooLarge(ValueError):
    """The reachable graph has more states than `GRAPH_NODE_LIMIT`; the message says so."""


def build_graph(design: Design, bounds: Bounds, limit: int = GRAPH_NODE_LIMIT) -> nx.DiGraph:
    """Every reachable state (node: packed key, with depth and values) and every transition.

    Edges carry the action's label and the properties the transition violates; a pair of
    states joined by two actions keeps one edge listing both labels. The explorer's own
    search reports each transition to a visitor, so the drawing and the counts come from
    one search.
    """
    batches: list[EdgeBatch] = []
    result = explore(
        design,
        bounds,
        SearchOptions(max_states=limit, max_seconds=COUNT_MAX_SECONDS),
        visitors=[OnEdges(batches.append)],
    )
    if not result.complete:
        raise GraphTooLarge(
            f"more than {limit:,} reachable states: too many to draw "
            f"(the drawing stops at {limit:,} states)"
        )
    layout = System(design, bounds).layout
    graph = nx.DiGraph()
    start = layout.pack(layout.initial())
    graph.add_node(start)
    for batch in batches:
        label = batch.rule.action.label()
        broken = [
            tuple(name for name, mask in batch.violations.items() if mask[i])
            for i in range(batch.sources.size)
        ]
        for source, target, names in zip(
            batch.sources.tolist(), batch.targets.tolist(), broken, strict=True
        ):
            if graph.has_edge(source, target):
                edge = graph.edges[source, target]
                edge["labels"] = (*edge["labels"], label)
                edge["violations"] = tuple(sorted({*edge["violations"], *names}))
            else:
                graph.add_edge(source, target, labels=(label,), violations=names)
    for key, depth in nx.single_source_shortest_path_length(graph, start).items():
        graph.nodes[key]["depth"] = depth
        graph.nodes[key]["state"] = layout.unpack(key)
    return graph


def neighbourhood_graph(design: Design, bounds: Bounds, actions: Sequence[Action]) -> nx.DiGraph:
    """The states of one run and every state one step away from them, for designs too big
    to draw whole: the run's states have its depth, a neighbour one more than its parent."""
    trace = replay(design, bounds, actions)
    system, layout = trace.system, trace.system.layout
    graph = nx.DiGraph()
    states = trace.states()
    for depth, state in enumerate(states):
        key = layout.pack(state)
        graph.add_node(key, depth=depth, state=state)
    for depth, state in enumerate(states):
        source = layout.pack(state)
        for successor in system.successors(state):
            target = layout.pack(successor.state)
            if target not in graph:
                graph.add_node(target, depth=depth + 1, state=successor.state)
            label = successor.rule.action.label()
            if graph.has_edge(source, target):
                edge = graph.edges[source, target]
                edge["labels"] = (*edge["labels"], label)
            else:
                graph.add_edge(source, target, labels=(label,), violations=successor.violations)
    return graph


def smaller_drawable(
    design: Design, bounds: Bounds, limit: int = GRAPH_NODE_LIMIT
) -> Bounds | None:
    """Bounds no larger than these (shorter horizon first, then fewer grants and writes)
    whose whole graph can be drawn, or None when none of the few tried fits."""
    candidates = []
    for horizon in range(bounds.horizon, -1, -1):
        for grants in range(bounds.grants, 0, -1):
            for writes in range(bounds.writes, 0, -1):
                candidates.append(Bounds(bounds.workers, bounds.lease, horizon, grants, writes))
    for candidate in candidates[1:40]:
        try:
            design.check_fits(candidate)
        except DesignError:
            continue
        result = explore(design, candidate, SearchOptions(max_states=limit, max_seconds=2.0))
        if result.complete:
            return candidate
    return None


def node_kinds(graph: nx.DiGraph, prop: str) -> dict[int, NodeKind]:
    """Each state's kind for `prop`: a violating exit, a violation still reachable, or safe."""
    exits = {u for u, _, data in graph.edges(data=True) if prop in data["violations"]}
    doomed: set[int] = set(exits)
    queue = deque(exits)
    while queue:
        node = queue.popleft()
        for parent in graph.predecessors(node):
            if parent not in doomed:
                doomed.add(parent)
                queue.append(parent)
    return {
        node: VIOLATING_EXIT if node in exits else DOOMED if node in doomed else SAFE
        for node in graph.nodes
    }


def path_keys(design: Design, bounds: Bounds, actions: Sequence[Action]) -> tuple[int, ...]:
    """The packed keys of the states a run visits, the initial state first."""
    trace = replay(design, bounds, actions)
    pack = trace.system.layout.pack
    return tuple(pack(state) for state in trace.states())


def layered_positions(graph: nx.DiGraph) -> dict[int, tuple[float, float]]:
    """x = BFS depth; within a depth, states ordered by their parents' mean height, centred."""
    levels: dict[int, list[int]] = {}
    for node, depth in graph.nodes(data="depth"):
        levels.setdefault(depth, []).append(node)
    positions: dict[int, tuple[float, float]] = {}
    for depth in sorted(levels):
        nodes = levels[depth]

        def height(node: int) -> float:
            """Mean height of the already placed parents (0 for the initial state)."""
            ys = [positions[p][1] for p in graph.predecessors(node) if p in positions]
            return sum(ys) / len(ys) if ys else 0.0

        ordered = sorted(nodes, key=lambda n: (height(n), n))
        middle = (len(ordered) - 1) / 2
        for rank, node in enumerate(ordered):
            positions[node] = (float(depth), float(rank - middle))
    return positions


def _state_text(system: System, state: State) -> str:
    """Hover text of a state: the values of the variables the design uses."""
    values = system.layout.as_dict(state)
    return " ".join(f"{c}={values[c]}" for c in system.layout.used_columns())


def graph_figure(
    graph: nx.DiGraph,
    design: Design,
    bounds: Bounds,
    prop: str,
    path: Sequence[int] = (),
) -> go.Figure:
    """The state graph: edges as one line trace, nodes as one scatter trace, the path on top."""
    system = System(design, bounds)
    positions = layered_positions(graph)
    kinds = node_kinds(graph, prop)
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for u, v in graph.edges:
        edge_x.extend((positions[u][0], positions[v][0], None))
        edge_y.extend((positions[u][1], positions[v][1], None))
    on_path = set(path)
    path_x: list[float | None] = [positions[n][0] for n in path if n in positions]
    path_y: list[float | None] = [positions[n][1] for n in path if n in positions]
    nodes = list(graph.nodes)
    hover = [
        f"depth {graph.nodes[n]['depth']}: {kinds[n].word}<br>"
        f"{_state_text(system, graph.nodes[n]['state'])}"
        + ("<br><b>on the counterexample</b>" if n in on_path else "")
        for n in nodes
    ]
    data: list[dict[str, Any]] = [
        {
            "type": "scattergl" if len(edge_x) > 6000 else "scatter",
            "name": "transition",
            "x": edge_x,
            "y": edge_y,
            "mode": "lines",
            "line": {"color": EDGE_COLOUR, "width": 0.6},
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "name": f"shortest violation of {prop}",
            "x": path_x,
            "y": path_y,
            "mode": "lines",
            "line": {"color": PATH_COLOUR, "width": 4},
            "hoverinfo": "skip",
            "visible": True if path else "legendonly",
        },
        {
            "type": "scatter",
            "name": "states",
            "x": [positions[n][0] for n in nodes],
            "y": [positions[n][1] for n in nodes],
            "mode": "markers",
            "marker": {
                "symbol": [kinds[n].symbol for n in nodes],
                "color": [kinds[n].colour for n in nodes],
                "size": [13 if n in on_path else 7 for n in nodes],
                "line": {
                    "color": [PATH_COLOUR if n in on_path else "#ffffff" for n in nodes],
                    "width": [2.5 if n in on_path else 0.5 for n in nodes],
                },
            },
            "hovertext": hover,
            "hovertemplate": "%{hovertext}<extra></extra>",
            "showlegend": False,
        },
    ]
    for kind in NODE_KINDS:
        data.append(
            {
                "type": "scatter",
                "name": f"{kind.word} ({prop})",
                "x": [None],
                "y": [None],
                "mode": "markers",
                "marker": {"symbol": kind.symbol, "color": kind.colour, "size": 10},
            }
        )
    levels = max((d for _, d in graph.nodes(data="depth")), default=0)
    widest = max((abs(y) for _, y in positions.values()), default=1.0)
    layout = {
        "height": int(min(900, max(420, 14 * widest + 200))),
        "margin": {"l": 20, "r": 20, "t": 40, "b": 40},
        "plot_bgcolor": "white",
        "hovermode": "closest",
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "xaxis": {
            "title": {"text": "breadth-first depth (steps from the initial state)"},
            "range": [-0.5, levels + 0.5],
            "showgrid": True,
            "gridcolor": "#eeeeee",
            "zeroline": False,
        },
        "yaxis": {"visible": False},
    }
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def depth_figure(counts: SpaceCounts) -> go.Figure:
    """States per BFS depth, with and without symmetry reduction, as grouped bars."""
    data = [
        {
            "type": "bar",
            "name": "states",
            "x": list(range(len(counts.level_sizes))),
            "y": list(counts.level_sizes),
            "marker": {"color": "#1f77b4"},
        },
        {
            "type": "bar",
            "name": "up to renaming workers (symmetry)",
            "x": list(range(len(counts.orbit_level_sizes))),
            "y": list(counts.orbit_level_sizes),
            "marker": {"color": "#ff7f0e", "pattern": {"shape": "/"}},
        },
    ]
    layout = {
        "barmode": "group",
        "height": 330,
        "margin": {"l": 50, "r": 20, "t": 30, "b": 50},
        "plot_bgcolor": "white",
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "xaxis": {"title": {"text": "breadth-first depth"}},
        "yaxis": {"title": {"text": "new states"}, "gridcolor": "#eeeeee"},
    }
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def kind_counts(graph: nx.DiGraph, prop: str) -> dict[str, int]:
    """How many states are of each kind for `prop`, by the kind's word."""
    found = dict.fromkeys((k.word for k in NODE_KINDS), 0)
    for kind in node_kinds(graph, prop).values():
        found[kind.word] += 1
    return found


PROPERTY_CHOICES: Final = PROPERTY_NAMES
