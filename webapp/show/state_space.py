"""The reachable state graph of a small design: counts and a networkx graph, as facts.

`count_space` asks the explorer for the numbers (with and without symmetry reduction);
`build_graph` collects the explorer's transitions into a networkx graph when the space is
small enough to draw (`GRAPH_NODE_LIMIT`). Each state is classed by what it means for a
chosen property: a violating transition leaves it, a violation can still be reached from
it, or it is safe. `webapp.draw.state_graph` draws them. Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import networkx as nx

from model.check.explorer import EdgeBatch, explore
from model.check.search import OnEdges, SearchOptions
from model.design import Bounds, Design, DesignError
from model.formats.trace import replay
from model.properties import BY_NAME, PROPERTY_NAMES
from model.rules import Action
from model.system import System
from model.verdicts import Status

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
    never_exercised: dict[str, str] = field(default_factory=dict)
    """For each property the finished count found never exercised, why (its verdict is
    vacuous: it holds only because nothing it speaks of happens)."""

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
        never_exercised={
            name: BY_NAME[name].vacuity(design)
            for name, v in plain.verdicts.items()
            if v.status is Status.VACUOUS
        },
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


def kind_counts(graph: nx.DiGraph, prop: str) -> dict[str, int]:
    """How many states are of each kind for `prop`, by the kind's word."""
    found = dict.fromkeys((k.word for k in NODE_KINDS), 0)
    for kind in node_kinds(graph, prop).values():
        found[kind.word] += 1
    return found


PROPERTY_CHOICES: Final = PROPERTY_NAMES
