"""Playground and state-graph response times (printed figures, not pass/fail).

- a playground click: the logic (replay, enabled buttons, statuses, the static timeline
  figure) and the whole page rerun through AppTest, for runs of 10 to 60 steps;
- the state-space page: the graph build and figure for graphs up to 2,000 states, and the
  whole page through AppTest.

Targets: a click under 300 ms, the graph page under 3 s.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from model.design import BOUND_LIMITS, Bounds, Design  # noqa: E402
from model.presets import PRESETS  # noqa: E402
from tests.app.helpers import page_alone  # noqa: E402
from webapp.draw.state_graph import graph_figure  # noqa: E402
from webapp.draw.swimlane import timeline_figure  # noqa: E402
from webapp.show.playground import Run, choices, play, property_statuses, take  # noqa: E402
from webapp.show.state_space import build_graph, count_space, path_keys  # noqa: E402

CLICK_TARGET_MS = 300
GRAPH_TARGET_S = 3.0
LONG_BOUNDS = Bounds(workers=3, lease=3, horizon=20, grants=8, writes=3)
PLAYGROUND = "playground"
STATE_SPACE = "state-space"
GRAPH_CASES = (
    Bounds(2, 2, 4, 2, 1),
    Bounds(2, 2, 5, 2, 1),
    Bounds(2, 3, 6, 2, 1),
    Bounds(2, 2, 6, 3, 1),
)


def random_run(steps: int, seed: int = 1) -> Run:
    """A run of `steps` random enabled actions (lease-only, roomy bounds)."""
    rng = random.Random(seed)
    run = Run(Design(receiver="none"), LONG_BOUNDS)
    while len(run.actions) < steps:
        run = take(run, rng.choice(choices(play(run))).action)
    return run


def click_logic(run: Run) -> float:
    """Seconds for what one click computes outside Streamlit (median of 5)."""
    times = []
    for _ in range(5):
        started = time.perf_counter()
        trace = play(run)
        choices(trace)
        property_statuses(trace)
        timeline_figure(trace, upto=len(trace.steps) or None).to_json()
        times.append(time.perf_counter() - started)
    return sorted(times)[2]


def click_apptest(run: Run) -> float:
    """Seconds for one click's whole page rerun through AppTest (median of 3)."""
    at = page_alone(PLAYGROUND, default_timeout=60)
    params = run.link_params()
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    times = []
    for _ in range(3):
        label = at.button(key="playground-undo")
        started = time.perf_counter()
        label.click().run()
        times.append(time.perf_counter() - started)
    return sorted(times)[1]


def main() -> None:
    """Print the figures."""
    print(f"playground click (target under {CLICK_TARGET_MS} ms)")
    print(f"{'steps':>6} {'logic ms':>9} {'page ms':>9}")
    for steps in (10, 20, 40, 60):
        run = random_run(steps)
        logic, page = click_logic(run), click_apptest(run)
        print(f"{steps:>6} {logic * 1000:>9.0f} {page * 1000:>9.0f}")
    print(f"\nstate-space graph (target under {GRAPH_TARGET_S:.0f} s)")
    print(f"{'bounds':<22} {'states':>7} {'build s':>8} {'figure s':>9} {'page s':>7}")
    design = PRESETS["lease-only"].design
    for bounds in GRAPH_CASES:
        counts = count_space(design, bounds)
        started = time.perf_counter()
        graph = build_graph(design, bounds)
        built = time.perf_counter() - started
        started = time.perf_counter()
        path = path_keys(design, bounds, counts.counterexamples["P2"])
        graph_figure(graph, design, bounds, "P2", path).to_json()
        drawn = time.perf_counter() - started
        at = page_alone(STATE_SPACE, default_timeout=120)
        at.run()
        for name in BOUND_LIMITS:
            at.number_input(key=f"space-{name}").set_value(getattr(bounds, name))
        started = time.perf_counter()
        at.run()
        page = time.perf_counter() - started
        print(f"{bounds.short():<22} {counts.states:>7,} {built:>8.2f} {drawn:>9.2f} {page:>7.2f}")


if __name__ == "__main__":
    main()
