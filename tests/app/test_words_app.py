"""AppTest: the walkthrough, Home and Compare speak in words, not in the model's identifiers:
no `snake_case` names, no "(ghost)", no literal backticks in what is shown as typed."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_hostile_links_app import page, page_strings

IDENTIFIER = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
"""A `snake_case` name such as `fenced_reads` or `storage_restarts`."""
READ_FIELDS = ("body", "label")
"""Fields a reader reads as text (Markdown bodies, headings, alerts, widget labels)."""
PAGES = [
    "home",
    "chapter-1",
    "chapter-2",
    "chapter-3",
    "chapter-4",
    "compare",
]


def _tables(at: AppTest) -> list[str]:
    """Every cell of every table and data frame on the page, as text."""
    frames = [t.value for t in at.table] + [d.value for d in at.dataframe]
    return [str(cell) for frame in frames for cell in frame.to_numpy().ravel()]


@pytest.mark.parametrize("path", PAGES)
def test_pages_speak_in_words(path: str) -> None:
    at = page(path)
    read = [text for name, text in page_strings(at._tree) if name in READ_FIELDS]
    assert read
    assert [m for text in read for m in IDENTIFIER.findall(text)] == []
    cells = _tables(at)
    assert cells or path == "home"  # every other page shows tables
    assert [c for c in cells if "(ghost)" in c or "`" in c] == []
    assert not [text for text in read if "(ghost)" in text]


@pytest.mark.parametrize("number", [2, 3, 4])
def test_every_run_of_a_chapter_speaks_in_words(number: int) -> None:
    from webapp.show.chapters import BY_NUMBER

    for spec in BY_NUMBER[number].runs:
        at = page(f"chapter-{number}", **{"chapter-run": spec.label})
        read = [text for name, text in page_strings(at._tree) if name in READ_FIELDS]
        assert [m for text in read for m in IDENTIFIER.findall(text)] == [], spec.label
        assert [c for c in _tables(at) if "(ghost)" in c or "`" in c] == []
