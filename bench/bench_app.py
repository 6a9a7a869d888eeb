"""Benchmark of the web app (prints figures, asserts nothing): first render of each page via
AppTest with cold caches, a warm re-render, an explored design fetched from the cache, and
the build of the animated timeline of a 60-step run (target: under 0.3 s).

Run: `python bench/bench_app.py` from the repository root.
"""

from __future__ import annotations

import logging
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from model.design import Bounds, Design  # noqa: E402
from model.formats.trace import Trace  # noqa: E402
from tests.app.helpers import switch_to  # noqa: E402
from webapp.draw.swimlane import timeline_figure  # noqa: E402
from webapp.show.events import forget_cached_facts  # noqa: E402
from webapp.show.navigation import PAGES  # noqa: E402
from webapp.show.playground import Run, choices, play, take  # noqa: E402
from webapp.show.trace_swimlane import forget_cached_legends  # noqa: E402

APP = str(ROOT / "webapp" / "app.py")
BENCH_BOUNDS = Bounds(workers=3, lease=2, horizon=12, grants=4, writes=2)
"""A design big enough that exploring it takes a noticeable time."""
TIMEOUT = 300
TIMELINE_STEPS = 60
TIMELINE_BOUNDS = Bounds(workers=3, lease=3, horizon=20, grants=8, writes=3)
TIMELINE_TARGET_S = 0.3


def _clear_caches() -> None:
    """Forget every cached exploration and replayed run, so the next render is cold."""
    st.cache_data.clear()
    st.cache_resource.clear()


def _opened(path: str) -> AppTest:
    """An AppTest that has run the app once and is switched to `path` (not yet run)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    if path != "home":
        switch_to(at, path)
    return at


def _timed_run(at: AppTest) -> float:
    """Seconds one run of the app takes; refuses a run that raised."""
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the page raised: {[e.value for e in at.exception]}")
    return elapsed


def bench_pages() -> None:
    """First (cold cache) and second (warm) render time of every page."""
    print(f"{'page':45} {'first render':>13} {'re-render':>10}")
    for entry in PAGES:
        _clear_caches()
        at = _opened(entry.url_path)
        first = _timed_run(at)
        again = _timed_run(at)
        print(f"{entry.title[:45]:45} {first:12.2f}s {again:9.2f}s")


def bench_cached_design() -> None:
    """Explore the reference design from the explore page, then ask again (cache hit)."""
    _clear_caches()
    params = {name: str(value) for name, value in BENCH_BOUNDS.to_dict().items()}
    params.update(receiver="none", run="1")
    times = []
    for _ in range(2):
        at = _opened("explore")
        for key, value in params.items():
            at.query_params[key] = value
        times.append(_timed_run(at))
    print(
        f"explore lease-only at {BENCH_BOUNDS.short()}: first {times[0]:.2f}s, "
        f"same design again (cached) {times[1]:.2f}s"
    )


def _random_trace(steps: int, seed: int) -> Trace:
    """A lease-only run of `steps` random enabled actions (roomy bounds, fixed seed)."""
    rng = random.Random(seed)
    run = Run(Design(receiver="none"), TIMELINE_BOUNDS)
    while len(run.actions) < steps:
        run = take(run, rng.choice(choices(play(run))).action)
    return play(run)


def _forget_positions() -> None:
    """Clear the memoised step positions, events, lease bars and legends (a cold build)."""
    forget_cached_facts()
    forget_cached_legends()


def bench_timeline() -> None:
    """Seconds to build the timeline of 60-step runs: the whole run, and one step of it."""
    for seed in (1, 2, 3):
        trace = _random_trace(TIMELINE_STEPS, seed)
        _forget_positions()
        started = time.perf_counter()
        figure = timeline_figure(trace)
        cold = time.perf_counter() - started
        warm = []
        for _ in range(5):
            _forget_positions()
            started = time.perf_counter()
            timeline_figure(trace)
            warm.append(time.perf_counter() - started)
        _forget_positions()
        started = time.perf_counter()
        timeline_figure(trace, upto=len(trace.steps) // 2)
        one_step = time.perf_counter() - started
        print(
            f"timeline of a {len(trace.steps)}-step run (seed {seed}): {len(figure.data)} "
            f"traces, first build {cold:.3f}s, median {statistics.median(warm):.3f}s, "
            f"one step's figure (cold) {one_step:.3f}s (target {TIMELINE_TARGET_S}s)"
        )


if __name__ == "__main__":
    logging.disable(logging.WARNING)  # AppTest runs in bare mode; its notices are not results
    bench_timeline()
    bench_pages()
    bench_cached_design()
