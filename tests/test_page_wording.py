"""A page holds layout, not wording: every phrase a page under `webapp/screens/` shows lives
in `webapp/content/` (as a named constant, or a function that makes it from the model's own
results), so a sentence has one home and can be read, reviewed and tested there."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

SCREENS: Final = Path(__file__).resolve().parent.parent / "webapp" / "screens"
MOST_WORDS: Final = 3
"""The longest string a page may spell out itself: a short label such as "Number of workers".
Anything longer is wording, and its home is `webapp/content/`."""


def _docstring_ids(tree: ast.AST) -> set[int]:
    """The string expressions that are documentation (module, class, function, attribute)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def wording_in(path: Path) -> list[str]:
    """The strings of a page module longer than a short label, with their line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documentation = _docstring_ids(tree)
    return [
        f"{path.name}:{node.lineno}: {node.value.strip()[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in documentation
        and len(node.value.split()) > MOST_WORDS
    ]


PAGE_MODULES: Final = sorted(p for p in SCREENS.rglob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", PAGE_MODULES, ids=lambda p: p.name)
def test_a_page_spells_out_no_sentence_itself(path: Path) -> None:
    assert wording_in(path) == []


def test_the_check_sees_wording_when_there_is_some(tmp_path: Path) -> None:
    """A planted sentence (plain and inside an f-string) is found; labels and docstrings are not."""
    page = tmp_path / "page.py"
    page.write_text(
        '"""A page: its docstring is documentation."""\n'
        "import streamlit as st\n"
        'st.button("Run the check")\n'
        'st.caption("Every property holds at these bounds.")\n'
        'st.info(f"{3} states were explored in all")\n',
        encoding="utf-8",
    )
    found = wording_in(page)
    assert [line.split(":")[1] for line in found] == ["4", "5"]
