"""Chapter 0's takeaway table on the page; its rows are `webapp.show.lease_lessons`.

Every cell is read off the explorer's verdicts on the chapter's presets (P1, P2, P3 for a
holder that pauses and wakes, P6 for one that crashes), so the table a student leaves with
says exactly what the model found, at the bounds it names.
"""

from __future__ import annotations

import streamlit as st

from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from webapp.content import chapters
from webapp.screens.cache import explore_cached
from webapp.show.chapters import BY_NUMBER
from webapp.show.lease_lessons import LEASE_CHAPTER, lesson_rows


def show_lesson_table() -> None:
    """The takeaway as a table: the chapter's presets, explored at the reference bounds."""
    chapter = BY_NUMBER[LEASE_CHAPTER]
    explorations = {
        name: explore_cached(PRESETS[name].design, REFERENCE_BOUNDS) for name in chapter.presets
    }
    st.subheader(chapters.LESSON_TABLE_TITLE)
    st.table(lesson_rows(explorations), hide_index=True)
    st.caption(chapters.lesson_table_caption(REFERENCE_BOUNDS))
