"""Download buttons whose file is made when they are clicked.

A file handed to Streamlit at render time is kept only until the page's next run: a
browser that fetches it just after a rerun, or from a page it is leaving, gets a 404. A
button whose file is made on the click keeps no file at all until someone asks for one.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

DOWNLOAD_ICON = ":material/download:"


def offer_download(
    where: DeltaGenerator | None,
    label: str,
    content: str | bytes,
    *,
    file_name: str,
    mime: str,
    key: str | None = None,
) -> None:
    """A download button for `content`, in `where` (None: the page), made on the click."""
    button = st.download_button if where is None else where.download_button
    button(
        label,
        _made_on_click(content),
        file_name=file_name,
        mime=mime,
        key=key,
        icon=DOWNLOAD_ICON,
        on_click="ignore",
    )


def _made_on_click(content: str | bytes) -> Callable[[], str | bytes]:
    """The content as Streamlit's deferred download wants it: a function of nothing."""
    return lambda: content
