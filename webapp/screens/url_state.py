"""The page's state in its URL: the one place that reads and writes `st.query_params`.

Pages keep what a visitor would share (a design, a step, a chosen property) in the address,
so a link opens the same view. Every page goes through these functions, which write only
what changed (a write reruns nothing, but a needless one still rewrites the address bar);
parsing a value is `webapp.show.links`' job, never this module's.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st


def read() -> dict[str, str]:
    """Every parameter of the address, as text (the last value of a repeated one)."""
    return {name: st.query_params[name] for name in st.query_params}


def get(name: str) -> str | None:
    """One parameter's text, or None when the address does not carry it."""
    return st.query_params.get(name)


def has(name: str) -> bool:
    """Whether the address carries this parameter."""
    return name in st.query_params


def put(**values: str) -> None:
    """Set these parameters, writing only those whose text changes."""
    for name, value in values.items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value


def put_all(values: Mapping[str, str]) -> None:
    """Set these parameters (names that are not identifiers, such as `chapter-run`, too)."""
    put(**dict(values))


def drop(*names: str) -> None:
    """Remove these parameters when present."""
    for name in names:
        if name in st.query_params:
            del st.query_params[name]


def replace(values: Mapping[str, str]) -> None:
    """Make the address carry exactly these parameters, rewriting it only when it differs."""
    if read() != dict(values):
        st.query_params.from_dict(dict(values))
