"""Helpers for the AppTest suites."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest


def shown(markdown: str) -> str:
    """Markdown source as the reader sees it: backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


TEXT_KINDS = (
    "title",
    "header",
    "subheader",
    "markdown",
    "caption",
    "error",
    "info",
    "success",
    "warning",
)


def all_text(at: AppTest) -> str:
    """Every markdown, caption, title, header and alert text of the page, joined."""
    parts: list[str] = []
    for kind in TEXT_KINDS:
        parts.extend(shown(str(element.value)) for element in getattr(at, kind))
    return "\n".join(parts)
