"""The state graph and the states per depth as plotly figures, from `webapp.show.state_space`.

Each state is drawn in its kind's symbol and colour for the chosen property, and the
highlighted counterexample as a path. Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx
import plotly.graph_objects as go

from model.design import Bounds, Design
from model.system import State, System
from webapp.show.state_space import (
    EDGE_COLOUR,
    NODE_KINDS,
    PATH_COLOUR,
    SpaceCounts,
    layered_positions,
    node_kinds,
)


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
