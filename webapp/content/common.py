"""Phrases several pages share: a link they partly do not understand, the set-file chooser
of the Exercises and Class pages, and what an uploaded trace file is called while it is read."""

from __future__ import annotations

from typing import Final


def link_not_understood(problem: str) -> str:
    """The sentence shown when a page's link carries something the page does not know."""
    return f"This link was partly not understood: {problem}."


def mirrors(what: str) -> str:
    """What real system a preset or a lock service stands for."""
    return f"Mirrors {what}."


DEFAULT_SET_CHOICE: Final = "The default set"
"""The set menu's entry for the set shipped with the app."""
UPLOAD_SET_CHOICE: Final = "Upload a set (TOML)"
"""The set menu's entry for a set file the visitor uploads."""


def set_file_label(most_bytes: int) -> str:
    """The label of the set-file uploader, with the largest file it takes."""
    return f"A set file (TOML, UTF-8, at most {most_bytes:,} bytes)"


READING_TRACE_FILE: Final = "reading your trace file"
"""The work an uploaded trace file waits for, as the busy message names it."""
