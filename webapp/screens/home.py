"""Home: what the app is for, and a link to each use."""

from __future__ import annotations

import streamlit as st

from webapp.content import common, home
from webapp.screens import url_state
from webapp.screens.page_links import page_named
from webapp.show.navigation import PAGES
from webapp.show.views import unknown_setting


def render_home() -> None:
    """Draw the home page: the app's purpose, a link per page, timelines and properties."""
    st.title(home.TITLE)
    if (problem := unknown_setting(url_state.read(), ())) is not None:
        st.error(common.link_not_understood(problem))
    st.markdown(home.INTRO)
    st.subheader(home.WHERE_TO_GO)
    for entry in PAGES[1:]:
        st.page_link(
            page_named(entry.url_path), label=f"**{entry.title}**: {entry.purpose}", icon=entry.icon
        )
    st.subheader(home.HOW_TO_READ_TITLE)
    st.markdown(home.how_to_read())
    st.subheader(home.PROPERTIES_TITLE)
    st.markdown(home.properties_list())
