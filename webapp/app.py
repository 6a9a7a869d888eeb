"""Fencing Lab web app: the entry point run by `streamlit run webapp/app.py`.

It only sets up the page order; each page is a function in `webapp/screens/`, listed in
`webapp.screens.registry`.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `streamlit run webapp/app.py` without installing the project
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from webapp.jobs.set_checks import warm  # noqa: E402
from webapp.screens.registry import sections  # noqa: E402
from webapp.show.style import PAGE_CSS  # noqa: E402

# Settings that must hold however the server was started (from any folder, with any config
# file): visitors never see tracebacks or server paths, nor developer menus. (A comment, not
# a string: Streamlit would show a bare string of the entry script on every page.)
VISITOR_SETTINGS = {
    "client.showErrorDetails": "none",
    "client.toolbarMode": "viewer",
}


def main() -> None:
    """Configure the page and run the navigation chosen by the visitor."""
    for name, value in VISITOR_SETTINGS.items():
        st.set_option(name, value)
    st.set_page_config(page_title="Fencing Lab", page_icon="🔒", layout="wide")
    st.html(f"<style>{PAGE_CSS}</style>")
    warm()  # the exercise sets are checked in the background from the first page served
    st.navigation(sections()).run()


main()
