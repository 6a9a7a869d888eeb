"""Every page of the app as a callable, keyed by its URL path, and the `st.Page` of each.

The menu's order, titles, icons and URL paths come from `webapp.show.navigation.PAGES`; this
table only says which function draws each page, so the two cannot drift apart unnoticed
(`tests/test_layers.py` checks that every entry has exactly one function).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import streamlit as st

from webapp.screens import page_links
from webapp.screens.chapter_page import render_chapter
from webapp.screens.class_page import render_class_page
from webapp.screens.compare_page import render_compare
from webapp.screens.exercises_page import render_exercises
from webapp.screens.explore_page import render_explore
from webapp.screens.home import render_home
from webapp.screens.lab_view import render_lab
from webapp.screens.playground_page import render_playground
from webapp.screens.proofs_page import render_proofs
from webapp.screens.stack_page import render_stack_page
from webapp.screens.state_space_page import render_state_space
from webapp.show.lease_lessons import LEASE_CHAPTER
from webapp.show.navigation import PAGES, PageEntry

HOME: Final = "home"
"""The URL path of the page shown at the site's root."""


def render_lease_chapter() -> None:
    """Walkthrough chapter 0: why a lease at all, with its table of lessons."""
    render_chapter(LEASE_CHAPTER)


def render_chapter_1() -> None:
    """Walkthrough chapter 1: the paused worker."""
    render_chapter(1)


def render_chapter_2() -> None:
    """Walkthrough chapter 2: the receiver must check."""
    render_chapter(2)


def render_chapter_3() -> None:
    """Walkthrough chapter 3: the gap after expiry."""
    render_chapter(3)


def render_chapter_4() -> None:
    """Walkthrough chapter 4: where tokens come from."""
    render_chapter(4)


RENDERERS: Final[dict[str, Callable[[], None]]] = {
    HOME: render_home,
    "chapter-0": render_lease_chapter,
    "chapter-1": render_chapter_1,
    "chapter-2": render_chapter_2,
    "chapter-3": render_chapter_3,
    "chapter-4": render_chapter_4,
    "explore": render_explore,
    "stack": render_stack_page,
    "compare": render_compare,
    "playground": render_playground,
    "state-space": render_state_space,
    "proofs": render_proofs,
    "lab": render_lab,
    "exercises": render_exercises,
    "class": render_class_page,
}


def page_of(entry: PageEntry) -> st.Page:
    """The Streamlit page of one menu entry: its function, title, icon and URL path."""
    return st.Page(
        RENDERERS[entry.url_path],
        title=entry.title,
        icon=entry.icon,
        url_path=entry.url_path,
        default=entry.url_path == HOME,
    )


def page_named(url_path: str) -> st.Page:
    """The Streamlit page at this URL path, for a link to it from another page."""
    return page_of(next(entry for entry in PAGES if entry.url_path == url_path))


def sections() -> dict[str, list[st.Page]]:
    """Every page, grouped by its menu section in the menu's order (and the pages made known
    to the links between them)."""
    page_links.provide(page_named)
    grouped: dict[str, list[st.Page]] = {}
    for entry in PAGES:
        grouped.setdefault(entry.section, []).append(page_of(entry))
    return grouped


def render_page(url_path: str) -> None:
    """Draw one page by itself, as if the visitor had opened its URL (for tests and benches)."""
    page_links.provide(page_named)
    RENDERERS[url_path]()
