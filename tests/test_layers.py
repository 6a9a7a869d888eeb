"""The web app's folders are its layers: only `webapp/screens/` (and the entry script) talks to
Streamlit; `show/`, `content/` and `draw/` are plain code a test can call; every menu entry
has exactly one page function; only the URL-state helper touches `st.query_params`."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

from webapp.screens.registry import RENDERERS
from webapp.show.navigation import PAGES

WEBAPP: Final = Path(__file__).resolve().parent.parent / "webapp"
STREAMLIT_FREE: Final = ("show", "content", "draw", "classroom", "jobs")
"""Folders whose modules must not import Streamlit (directly): what to show, the words, the
figures, the exercises and classes, and the work done apart from a page (proof jobs, the
background set checker, the heavy-work slots)."""


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _imported(path: Path) -> set[str]:
    """Every module name this file imports (at any depth: inside functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _uses_streamlit(path: Path) -> bool:
    return any(name == "streamlit" or name.startswith("streamlit.") for name in _imported(path))


def test_the_layer_folders_exist_and_hold_modules() -> None:
    for folder in (*STREAMLIT_FREE, "screens"):
        assert [p for p in _modules(WEBAPP / folder) if p.name != "__init__.py"], folder


def test_every_module_sits_in_a_layer_folder_but_the_entry_script() -> None:
    loose = {p.name for p in WEBAPP.glob("*.py")}
    assert loose == {"__init__.py", "app.py"}
    folders = {p.name for p in WEBAPP.iterdir() if p.is_dir() and p.name[0].isalpha()}
    assert folders == {*STREAMLIT_FREE, "screens"}


@pytest.mark.parametrize("folder", STREAMLIT_FREE)
def test_no_module_of_the_pure_layers_imports_streamlit(folder: str) -> None:
    offenders = [p.name for p in _modules(WEBAPP / folder) if _uses_streamlit(p)]
    assert offenders == []


def test_only_screens_and_the_entry_script_import_streamlit() -> None:
    users = {
        str(p.relative_to(WEBAPP))
        for p in _modules(WEBAPP)
        if _uses_streamlit(p) and p.relative_to(WEBAPP).parts[0] != "screens"
    }
    assert users == {"app.py"}


def test_nothing_outside_the_screens_reaches_up_into_them() -> None:
    """Streamlit reaches no other module through a screen either (the entry script aside)."""
    found = {}
    for path in _modules(WEBAPP):
        if path.relative_to(WEBAPP).parts[0] in ("screens", "app.py"):
            continue
        if up := {n for n in _imported(path) if n.startswith("webapp.screens")}:
            found[str(path.relative_to(WEBAPP))] = up
    assert found == {}


def test_the_figures_are_drawn_from_facts_not_from_pages() -> None:
    """draw/ may read show/ (the facts) but no page, and show/ never draws."""
    for path in _modules(WEBAPP / "show"):
        assert not {n for n in _imported(path) if n.startswith("webapp.draw")}, path
    for path in _modules(WEBAPP / "draw"):
        assert not {n for n in _imported(path) if n.startswith("webapp.screens")}, path


def test_only_the_url_state_helper_touches_query_params() -> None:
    touching = {
        str(p.relative_to(WEBAPP))
        for p in _modules(WEBAPP)
        if "st.query_params" in p.read_text(encoding="utf-8")
    }
    assert touching == {"screens/url_state.py"}


def test_no_page_is_a_file_of_its_own() -> None:
    """Pages are functions: no module under screens/ draws anything when imported."""
    for path in _modules(WEBAPP / "screens"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                pytest.fail(f"{path.name} calls {ast.unparse(node.value)} at import")


def test_every_menu_entry_has_exactly_one_page_function() -> None:
    assert [entry.url_path for entry in PAGES] == list(RENDERERS)
    assert len({entry.url_path for entry in PAGES}) == len(PAGES)
    assert len(set(map(id, RENDERERS.values()))) == len(RENDERERS)


def test_the_url_paths_and_titles_links_rely_on_are_kept() -> None:
    """Shared links name these paths; the titles are what the menu shows."""
    assert {entry.url_path: entry.title for entry in PAGES} == {
        "home": "Home",
        "chapter-0": "0. Why a lease at all",
        "chapter-1": "1. The paused worker",
        "chapter-2": "2. The receiver must check",
        "chapter-3": "3. The gap after expiry",
        "chapter-4": "4. Where tokens come from",
        "explore": "Explore a design",
        "stack": "Check my stack",
        "compare": "Compare designs",
        "playground": "Be the scheduler",
        "state-space": "State space",
        "proofs": "Proofs",
        "lab": "Live lab",
        "exercises": "Exercises",
        "class": "Class",
    }
