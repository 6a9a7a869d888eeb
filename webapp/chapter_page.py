"""The page layout shared by the four walkthrough chapters."""

from __future__ import annotations

import streamlit as st

from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from webapp.cache import chapter_traces_cached, explore_cached
from webapp.chapters import BY_NUMBER, Chapter, RunSpec
from webapp.player import show_traces
from webapp.story import run_summary
from webapp.verdicts import verdict_rows


def _reset_step() -> None:
    """Choosing another run starts it from step 0."""
    st.query_params["step"] = "0"


def source_line(spec: RunSpec) -> str:
    """Where a run's actions come from, in words."""
    bounds = spec.bounds.in_words()
    if spec.counterexample_of is None:
        return f"Scripted actions, replayed through the model at {bounds}."
    preset, prop = spec.counterexample_of
    return f"The explorer's shortest counterexample to {prop} for `{preset}` at {bounds}."


def render_chapter(number: int) -> None:
    """Title, question, run chooser, step player, explorer verdicts and the takeaway."""
    chapter = BY_NUMBER[number]
    st.title(f"{chapter.number}. {chapter.title}")
    st.markdown(chapter.question)
    traces = chapter_traces_cached(number)
    if chapter.together:
        for spec, trace in zip(chapter.runs, traces, strict=True):
            st.markdown(f"**{spec.label}.** {spec.caption} {run_summary(trace)}")
        st.caption(source_line(chapter.runs[0]))
        show_traces(traces, param="step", key=f"chapter{number}")
        _verdicts_and_takeaway(chapter)
        return
    choice = st.radio(
        "Run",
        list(range(len(chapter.runs))),
        format_func=lambda i: chapter.runs[i].label,
        key="chapter-run",
        bind="query-params",
        horizontal=True,
        on_change=_reset_step,
    )
    index = choice if isinstance(choice, int) else 0
    spec, trace = chapter.runs[index], traces[index]
    st.markdown(f"{spec.caption} {run_summary(trace)}")
    st.caption(source_line(spec))
    show_traces([trace], param="step", key=f"chapter{number}-{index}")
    _verdicts_and_takeaway(chapter)


def _verdicts_and_takeaway(chapter: Chapter) -> None:
    """The explorer's verdicts on the chapter's presets, and the lesson they support."""
    st.subheader("What the explorer says about each design")
    explorations = {
        name: explore_cached(PRESETS[name].design, REFERENCE_BOUNDS) for name in chapter.presets
    }
    st.dataframe(verdict_rows(explorations, chapter.properties), hide_index=True)
    st.caption(
        f"Every interleaving at {REFERENCE_BOUNDS.in_words()}; the number after a violation is the "
        "length of the shortest violating run."
    )
    st.info(chapter.takeaway)
