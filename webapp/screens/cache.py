"""The model's heavy results for the pages, computed once for every visitor of the server.

Explorations, random searches, the compare matrix and the state-space counts are kept by
`webapp.jobs.shared_results`: in the process's memory and, when the server's processes
share a folder (`FENCING_LAB_SHARED`), on disk for all of them, so a class that opens the
same design at once has it explored once. Another visitor's request for a result being
computed waits for it with a note on the page (each update of the note is where Streamlit
stops the script of a visitor who left). `*_when_free` functions take a heavy-work slot only
when the result has to be computed, and give None after saying the server is busy.

The results are shared objects: pages read them and never change them. Replayed traces
hold the step interpreter with its rule functions, so they stay in the process
(`st.cache_resource`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

import streamlit as st

from classroom.grading import Verdicts, known_verdicts, verdicts
from fencing.strategies import HYPOTHESIS, RANDOM
from model.check.explorer import Exploration, Progress, explore
from model.check.random_search import RandomSearch
from model.check.search import OnLevel, SearchOptions
from model.design import Bounds, Design
from model.formats.trace import Trace, replay
from model.rules import Action
from webapp.content import searching
from webapp.content.busy import sharing_sentence
from webapp.jobs.shared_results import ResultKey, shared_results, verdicts_key
from webapp.screens import limits
from webapp.screens.limits import heavy_work
from webapp.show.chapters import chapter_traces

T = TypeVar("T")

WEB_MAX_STATES: Final = 1_000_000
"""State budget of one exploration started from the web app."""
WEB_MAX_SECONDS: Final = 20.0
"""Time budget of one exploration started from the web app."""
WEB_MAX_RUNS: Final = 2_000
"""Most random runs per property one random search started from the web app may take."""
SHARED_WAIT_SECONDS: Final = 60.0
"""How long a request waits for another's computation of the same result before it computes
the result itself (longer than any budget plus the wait for a slot)."""


def _worth_keeping(value: object) -> bool:
    """Whether a computed value is a result (None: the server was busy, nothing computed)."""
    return value is not None


def shared(
    key: ResultKey,
    compute: Callable[[], T],
    keep: Callable[[T], bool] = _worth_keeping,
    remember: bool = True,
) -> T:
    """The result of `key`, found or computed once for every visitor (kept when `keep`
    says so), with a note on the page while another visitor's request computes it."""
    notes: list[Any] = []

    def show_waiting(seconds: float) -> None:
        if not notes:
            notes.append(st.empty())
        notes[0].caption(sharing_sentence(seconds))

    try:
        return shared_results().computed_once(
            key, compute, keep, show_waiting, SHARED_WAIT_SECONDS, remember
        )
    finally:
        if notes:
            notes[0].empty()


def when_free(
    key: ResultKey,
    compute: Callable[[], T],
    what: str,
    keep: Callable[[T | None], bool] = _worth_keeping,
    remember: bool = True,
) -> T | None:
    """The result of `key`, computed under a heavy-work slot only when nobody has it yet;
    None after saying the server is busy."""

    def under_a_slot() -> T | None:
        with heavy_work(what, wait=limits.WAIT_SECONDS) as admitted:
            return compute() if admitted else None

    return shared(key, under_a_slot, keep, remember)


def verdicts_when_free(
    design: Design, bounds: Bounds, what: str, spinner: str | None = None
) -> Verdicts | None:
    """The explorer's verdicts for grading: known in this process, kept by another, or
    explored now under a heavy-work slot (None: the server was busy, said so). The
    process's own memory of verdicts is the grading's (`known_verdicts`)."""
    known = known_verdicts(design, bounds)
    if known is not None:
        return known

    def explore_now() -> Verdicts:
        if spinner is None:
            return verdicts(design, bounds)
        with st.spinner(spinner):
            return verdicts(design, bounds)

    return when_free(
        verdicts_key(design, bounds), explore_now, what, keep=_complete, remember=False
    )


def _complete(found: Verdicts | None) -> bool:
    """Whether verdicts are worth keeping for everyone: complete ones only."""
    return found is not None and found.complete


def _explore_with_bar(
    design: Design, bounds: Bounds, max_states: int, max_seconds: float
) -> Exploration:
    """Explore every interleaving with a progress bar."""
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


def exploration_key(
    design: Design, bounds: Bounds, max_states: int, max_seconds: float
) -> ResultKey:
    """What an exploration is kept under."""
    return ResultKey("exploration", (design, bounds, max_states, max_seconds))


def explore_cached(
    design: Design,
    bounds: Bounds,
    max_states: int = WEB_MAX_STATES,
    max_seconds: float = WEB_MAX_SECONDS,
) -> Exploration:
    """Explore every interleaving once per design, bounds and budget for the whole server
    (the pages' fixed designs: explored without waiting for a slot)."""
    key = exploration_key(design, bounds, max_states, max_seconds)
    return shared(key, lambda: _explore_with_bar(design, bounds, max_states, max_seconds))


def explore_when_free(
    design: Design, bounds: Bounds, max_states: int, what: str
) -> Exploration | None:
    """A visitor's exploration: found, or made under a heavy-work slot (None: busy)."""
    key = exploration_key(design, bounds, max_states, WEB_MAX_SECONDS)
    return when_free(
        key, lambda: _explore_with_bar(design, bounds, max_states, WEB_MAX_SECONDS), what
    )


def random_search_when_free(
    design: Design, bounds: Bounds, runs: int, seed: int, what: str, strategy: str = RANDOM
) -> RandomSearch | None:
    """A random (or, for `strategy` hypothesis, a Hypothesis) search once per design,
    bounds, runs, seed and strategy, within the web time budget, made under a heavy-work
    slot when nobody has it yet (None: busy)."""
    from model.check.hypothesis_search import hypothesis_search
    from model.check.random_search import random_search

    run_search = hypothesis_search if strategy == HYPOTHESIS else random_search

    def search() -> RandomSearch:
        with st.spinner(searching.searching_at_random(runs, strategy)):
            return run_search(design, bounds, runs=runs, seed=seed, max_seconds=WEB_MAX_SECONDS)

    key = ResultKey("random search", (design, bounds, runs, seed, strategy, WEB_MAX_SECONDS))
    return when_free(key, search, what)


@st.cache_resource(show_spinner=False, max_entries=256)
def replay_cached(design: Design, bounds: Bounds, actions: tuple[Action, ...], title: str) -> Trace:
    """A replayed run, built once per design, bounds and action list."""
    return replay(design, bounds, actions, title=title)


@st.cache_resource(show_spinner=searching.REPLAYING_CHAPTER)
def chapter_traces_cached(number: int) -> tuple[Trace, ...]:
    """Every run of a walkthrough chapter, built once."""
    return chapter_traces(number)
