"""Links from one page to another, without a page importing the registry of every page.

The registry (`webapp.screens.registry`) lists each page's function and so imports every
page; a page that links to another asks here for the other's `st.Page`, which the registry
makes once it is loaded (it always is: the app builds its menu from it).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

_MAKERS: list[Callable[[str], st.Page]] = []


def provide(make: Callable[[str], st.Page]) -> None:
    """Called by the registry: how to make the page at a URL path."""
    _MAKERS[:] = [make]


def page_named(url_path: str) -> st.Page:
    """The Streamlit page at this URL path, for a link to it."""
    if not _MAKERS:
        raise RuntimeError("no page registry")
    return _MAKERS[0](url_path)
