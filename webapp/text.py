"""User text as data: escaping for Markdown, so a link or a file can never add markup.

Anything that came from a URL, an uploaded file, a form or a teacher's exercise folder is
passed through `escape_markdown` (or shown with `st.code`/`st.text`) before Streamlit
renders it: a `[link](…)` or `![image](…)` in a parameter stays literal text.
"""

from __future__ import annotations

import re
from typing import Final

MARKDOWN_SPECIAL: Final = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&])")
"""Characters with a meaning in Streamlit's Markdown (`$` starts LaTeX, `:` a directive)."""

MAX_SHOWN_CHARS: Final = 300


def escape_markdown(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """The text shortened to `limit` characters, with every Markdown character escaped."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return MARKDOWN_SPECIAL.sub(r"\\\1", text.replace("\n", " "))


TEACHER_SPECIAL: Final = re.compile(r"([\\\[\]!<>$:|])")
"""In a teacher's text: what makes links, images, HTML, LaTeX, directives or tables."""


CODE_SPAN: Final = re.compile(r"(`[^`\n]*`)")
"""Inline code, shown literally by Markdown already (nothing inside needs escaping)."""


def safe_markdown(text: str, limit: int = 4_000) -> str:
    """A teacher's Markdown with emphasis and code kept, and links, images, HTML, LaTeX and
    colour directives made literal, so an exercise file can format but never link or load."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    parts = CODE_SPAN.split(text)
    return "".join(
        part if index % 2 else TEACHER_SPECIAL.sub(r"\\\1", part)
        for index, part in enumerate(parts)
    )
