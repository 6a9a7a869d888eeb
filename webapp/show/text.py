"""User text as data: escaping for Markdown, so a link or a file can never add markup.

Anything that came from a URL, an uploaded file, a form or a teacher's exercise folder is
passed through `escape_markdown` (or shown with `st.code`/`st.text`) before Streamlit
renders it: a `[link](…)` or `![image](…)` in a parameter stays literal text. Escaping is
not enough for bare addresses: Streamlit's Markdown turns `www.…`, `https://…` and
`name@host` into links after escapes are read. So both helpers also put a word joiner
(U+2060: invisible, and no line break) after `www`, between `:` and `//`, and after `@`,
which the autolinker cannot match across; the text reads the same.
"""

from __future__ import annotations

import re
from typing import Final

MARKDOWN_SPECIAL: Final = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&])")
"""Characters with a meaning in Streamlit's Markdown (`$` starts LaTeX, `:` a directive)."""

MAX_SHOWN_CHARS: Final = 300

WORD_JOINER: Final = "\u2060"
"""Invisible and unbreakable: splits a run the autolinker would read as an address."""

AUTOLINK_SEAMS: Final = re.compile(r"(?<=www)(?=\.)|(?<=:)(?=//)|(?<=@)", re.IGNORECASE)
"""Where an address starts: after `www` before a dot, after a scheme's colon, after `@`."""


def no_autolinks(text: str) -> str:
    """The text with a word joiner where Markdown would start a bare link or e-mail link."""
    return AUTOLINK_SEAMS.sub(WORD_JOINER, text)


def escape_markdown(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """The text shortened to `limit` characters, with every Markdown character escaped and
    no bare address left to link."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return MARKDOWN_SPECIAL.sub(r"\\\1", no_autolinks(text.replace("\n", " ")))


TEACHER_SPECIAL: Final = re.compile(r"([\\\[\]!<>$:|&])")
"""In a teacher's text: what makes links, images, HTML, LaTeX, directives, tables or
characters by reference (`&#46;` would read as a dot after the joiners are placed)."""


CODE_SPAN: Final = re.compile(r"(`[^`\n]*`)")
"""Inline code, shown literally by Markdown already (nothing inside needs escaping)."""


def safe_markdown(text: str, limit: int = 4_000) -> str:
    """A teacher's Markdown with emphasis and code kept, and links (bare addresses too),
    images, HTML, LaTeX and colour directives made literal, so an exercise file can format
    but never link or load."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    parts = CODE_SPAN.split(text)
    return "".join(
        part if index % 2 else TEACHER_SPECIAL.sub(r"\\\1", no_autolinks(part))
        for index, part in enumerate(parts)
    )


def counted(count: int, noun: str, plural: str = "") -> str:
    """`1 step`, `2 steps`: a count with its noun in the number it takes."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def is_or_are(count: int) -> str:
    """The verb `to be` agreeing with a count."""
    return "is" if count == 1 else "are"
