"""Streamlit caches around the model: explorations keyed by design and bounds, replayed runs.

Explorations are plain data (picklable), so they use `st.cache_data`; replayed traces hold
the step interpreter with its rule functions, so they use `st.cache_resource` and are
never mutated by the pages.
"""

from __future__ import annotations

from typing import Final

import streamlit as st

from fencing.strategies import HYPOTHESIS, RANDOM
from model.check.explorer import Exploration, Progress, explore
from model.check.random_search import RandomSearch
from model.check.search import OnLevel, SearchOptions
from model.design import Bounds, Design
from model.formats.trace import Trace, replay
from model.rules import Action
from webapp.content import searching
from webapp.show.chapters import chapter_traces

WEB_MAX_STATES: Final = 1_000_000
"""State budget of one exploration started from the web app."""
WEB_MAX_SECONDS: Final = 20.0
"""Time budget of one exploration started from the web app."""


@st.cache_data(show_spinner=False, max_entries=128)
def explore_cached(
    design: Design,
    bounds: Bounds,
    max_states: int = WEB_MAX_STATES,
    max_seconds: float = WEB_MAX_SECONDS,
) -> Exploration:
    """Explore every interleaving once per design, bounds and budget, with a progress bar."""
    bar = st.progress(0.0, text=searching.EXPLORING)

    def report(progress: Progress) -> None:
        """Move the bar by the larger of the state and time budget fractions used."""
        used = max(progress.states / max_states, progress.seconds / max_seconds)
        bar.progress(min(used, 1.0), text=searching.exploring(progress))

    try:
        return explore(
            design,
            bounds,
            SearchOptions(max_states=max_states, max_seconds=max_seconds),
            visitors=[OnLevel(report)],
        )
    finally:
        bar.empty()


WEB_MAX_RUNS: Final = 2_000
"""Most random runs per property one random search started from the web app may take."""


@st.cache_data(show_spinner=False, max_entries=64)
def random_search_cached(
    design: Design,
    bounds: Bounds,
    runs: int,
    seed: int,
    strategy: str = RANDOM,
    max_seconds: float = WEB_MAX_SECONDS,
) -> RandomSearch:
    """A random (or, for `strategy` hypothesis, a Hypothesis) search once per design,
    bounds, runs, seed and strategy, within the web time budget."""
    from model.check.hypothesis_search import hypothesis_search
    from model.check.random_search import random_search

    search = hypothesis_search if strategy == HYPOTHESIS else random_search
    with st.spinner(searching.searching_at_random(runs, strategy)):
        return search(design, bounds, runs=runs, seed=seed, max_seconds=max_seconds)


@st.cache_resource(show_spinner=False, max_entries=256)
def replay_cached(design: Design, bounds: Bounds, actions: tuple[Action, ...], title: str) -> Trace:
    """A replayed run, built once per design, bounds and action list."""
    return replay(design, bounds, actions, title=title)


@st.cache_resource(show_spinner=searching.REPLAYING_CHAPTER)
def chapter_traces_cached(number: int) -> tuple[Trace, ...]:
    """Every run of a walkthrough chapter, built once."""
    return chapter_traces(number)
