"""The verdict table of docs/checker.md is the explorer's, at the bounds the page names."""

from __future__ import annotations

import re
from pathlib import Path

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS
from model.presets import PRESET_NAMES, PRESETS

CHECKER_DOC = Path(__file__).resolve().parents[1] / "docs" / "checker.md"
TABLE = re.compile(r"<!-- matrix:[^\n]*-->\n(.*?)<!-- end matrix -->", re.S)


def table_rows(text: str) -> list[str]:
    """The body rows of the verdict table."""
    found = TABLE.search(text)
    assert found is not None, "docs/checker.md has no verdict table"
    return [line for line in found.group(1).splitlines()[2:] if line]


def test_the_documented_matrix_is_the_explorers() -> None:
    text = CHECKER_DOC.read_text(encoding="utf-8")
    assert REFERENCE_BOUNDS.in_words() in " ".join(text.split())
    rows = table_rows(text)
    assert [row.split("|")[1].strip(" `") for row in rows] == list(PRESET_NAMES)
    for row in rows:
        name, *cells = (cell.strip(" `") for cell in row.strip("|").split("|"))
        found = explore(PRESETS[name].design, REFERENCE_BOUNDS).verdicts
        expected = [str(v.shortest) if v.violated else str(v.status) for v in found.values()]
        assert cells == expected, name
