"""The page layout shared by the four walkthrough chapters."""

from __future__ import annotations

from typing import Final

import streamlit as st

from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from webapp.content import chapters, common
from webapp.screens import url_state
from webapp.screens.cache import chapter_traces_cached, explore_cached
from webapp.screens.chapter_lease import show_lesson_table
from webapp.screens.page_links import page_named
from webapp.screens.player import show_traces
from webapp.show.chapters import BY_NUMBER, Chapter
from webapp.show.lease_lessons import LEASE_CHAPTER
from webapp.show.navigation import PAGES, PageEntry
from webapp.show.story import run_summary
from webapp.show.verdicts import verdict_rows
from webapp.show.views import unknown_setting

RUN_PARAM: Final = "chapter-run"
"""The URL parameter (and widget key) of the chosen run."""
TAB_PARAM: Final = "chapter-tab"
"""The URL parameter (and widget key) of the open tab, when runs stepped together are tabs."""
AFTER_THE_WALKTHROUGH: Final = "exercises"
"""The page the last chapter leads to."""
MOST_SIDE_BY_SIDE: Final = 2
"""Most runs shown side by side; more are tabs, so that each keeps a readable width."""
KNOWN_PARAMS: Final = frozenset({"step", RUN_PARAM, TAB_PARAM})
"""The parameters a chapter's link may carry."""


def _reset_step() -> None:
    """Choosing another run opens it on the step that matters: the link names no step."""
    if url_state.has("step"):
        url_state.drop("step")


def link_problems(chapter: Chapter) -> list[str]:
    """What in the link this page does not understand, in words (never quoting it)."""
    unknown = unknown_setting(url_state.read(), KNOWN_PARAMS)
    problems = [] if unknown is None else [unknown]
    raw = url_state.get(RUN_PARAM)
    if raw is not None and raw not in [spec.label for spec in chapter.runs]:
        problems.append(chapters.NO_SUCH_RUN)
    tab = url_state.get(TAB_PARAM)
    if tab is not None and tab not in [spec.tab for spec in chapter.all_runs]:
        problems.append(chapters.NO_SUCH_RUN)
    return problems


def render_chapter(number: int) -> None:
    """Title, question, run chooser, step player, explorer verdicts and the takeaway."""
    chapter = BY_NUMBER[number]
    st.title(f"{chapter.number}. {chapter.title}")
    for problem in link_problems(chapter):
        st.error(common.link_not_understood(problem))
    st.markdown(chapter.question)
    traces = chapter_traces_cached(number)
    index = 0
    if len(chapter.runs) > 1:
        labels = [spec.label for spec in chapter.runs]
        choice = st.radio(
            "Run",
            labels,
            key=RUN_PARAM,
            bind="query-params",
            horizontal=True,
            on_change=_reset_step,
        )
        index = labels.index(choice) if choice in labels else 0
    choice_spec = chapter.runs[index]
    specs = choice_spec.shown()
    first = sum(len(spec.shown()) for spec in chapter.runs[:index])
    shown = traces[first : first + len(specs)]
    for spec, trace in zip(specs, shown, strict=True):
        lead = f"**{spec.label}.** " if len(specs) > 1 else ""
        st.markdown(f"{lead}{spec.caption} {run_summary(trace)}")
        st.caption(chapters.source_line(spec, trace))
    tabbed = len(specs) > MOST_SIDE_BY_SIDE
    show_traces(
        shown,
        param="step",
        key=f"chapter{number}-{index}",
        labels=[spec.tab if tabbed else spec.label for spec in specs] if len(specs) > 1 else (),
        side_by_side=1 < len(specs) <= MOST_SIDE_BY_SIDE,
        tab_param=TAB_PARAM if tabbed else "",
    )
    _verdicts_and_takeaway(chapter)
    if number == LEASE_CHAPTER:
        show_lesson_table()
    _next_link(number)


def next_page(number: int) -> PageEntry:
    """Where a reader goes after this chapter: the next chapter, or after the last one the
    exercises, to try what the walkthrough taught."""
    pages = {entry.url_path: entry for entry in PAGES}
    return pages.get(f"chapter-{number + 1}", pages[AFTER_THE_WALKTHROUGH])


def _next_link(number: int) -> None:
    """The link at the end of a chapter to what comes next."""
    entry = next_page(number)
    st.page_link(
        page_named(entry.url_path),
        label=chapters.next_label(entry.title),
        icon=":material/arrow_forward:",
        help=entry.purpose,
    )


def _verdicts_and_takeaway(chapter: Chapter) -> None:
    """The explorer's verdicts on the chapter's presets, and the lesson they support."""
    st.subheader(chapters.VERDICTS_TITLE)
    explorations = {
        name: explore_cached(PRESETS[name].design, REFERENCE_BOUNDS) for name in chapter.presets
    }
    st.table(verdict_rows(explorations, chapter.properties), hide_index=True)
    st.caption(chapters.verdicts_caption(REFERENCE_BOUNDS))
    st.info(chapter.takeaway)
