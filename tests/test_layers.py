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
STREAMLIT_FREE: Final = ("show", "content", "draw", "jobs")
"""Folders whose modules must not import Streamlit (directly): what to show, the words, the
figures, and the work done apart from a page (proof jobs, the background set checker, the
heavy-work slots). The exercises and classes are a package of their own (`classroom/`),
used by the command line too, and free of Streamlit as well."""


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


def test_nothing_below_the_web_app_imports_streamlit() -> None:
    root = WEBAPP.parent
    users = [
        str(p.relative_to(root))
        for package in ("model", "advise", "classroom", "proofs", "lab", "fencing")
        for p in _modules(root / package)
        if _uses_streamlit(p)
    ]
    assert users == []


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


# ----- the packages by concern, and the direction of every import between them -------------

ROOT: Final = WEBAPP.parent
LAYERS: Final = (
    ("the specification", "model"),
    ("the checker", "model.check"),
    ("the explanations", "model.explain"),
    ("the formats", "model.formats"),
    ("the advisor", "advise"),
    ("the classroom", "classroom"),
    ("the prover", "proofs"),
    ("the live lab", "lab"),
    ("the command line", "fencing"),
    ("the web app", "webapp"),
)
"""Every package, lowest first: a module may import its own layer and the layers below."""


def _layer(module: str) -> int | None:
    """The index in `LAYERS` of the package a module belongs to (its longest prefix)."""
    best: tuple[int, int] | None = None
    for index, (_, package) in enumerate(LAYERS):
        inside = module == package or module.startswith(package + ".")
        if inside and (best is None or len(package) > best[0]):
            best = (len(package), index)
    return best[1] if best else None


def _module_name(path: Path) -> str:
    """`model/check/bfs.py` -> `model.check.bfs`."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_modules() -> dict[str, Path]:
    """Every module of the project's packages, by name."""
    found = {}
    for _, package in LAYERS:
        if "." in package:
            continue
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def test_every_package_says_what_it_holds_and_what_it_may_import() -> None:
    for _, package in LAYERS:
        init = ROOT / package.replace(".", "/") / "__init__.py"
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(docstring) > 80, f"{package} has no docstring saying what it holds"
        if package not in ("model", "webapp", "fencing", "lab", "proofs"):
            assert "May import" in docstring, f"{package} does not say what it may import"


def test_no_module_imports_a_layer_above_its_own() -> None:
    """spec ← checker ← explanations ← formats ← advisor ← classroom ← prover ← lab ← CLI ←
    web app: each import goes down (or stays in its layer), never up."""
    upward = []
    for name, path in _project_modules().items():
        own = _layer(name)
        assert own is not None, name
        for imported in _imported(path):
            theirs = _layer(imported)
            if theirs is not None and theirs > own:
                upward.append(f"{name} ({LAYERS[own][0]}) imports {imported} ({LAYERS[theirs][0]})")
    assert upward == []


def test_the_layer_test_sees_an_upward_import(tmp_path: Path) -> None:
    """The rule itself: a spec module importing the checker is upward, the reverse is not."""
    assert _layer("model.rules") == 0 and _layer("model.check.bfs") == 1
    assert _layer("advise.advice") == 4 and _layer("webapp.screens.home") == 9
    planted = tmp_path / "planted.py"
    planted.write_text("from model.check.explorer import explore\n", encoding="utf-8")
    assert {_layer(n) for n in _imported(planted)} == {1}


def _imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The project modules a file imports (a `from package import module` counts the module),
    inside functions and under `TYPE_CHECKING` too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of the graph (its modules in order), or None when there is none."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == 1:
                return [*path[path.index(imported) :], imported]
            if imported not in state and (found := visit(imported)) is not None:
                return found
        state[module] = 2
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


def test_no_import_circle_anywhere() -> None:
    """No module imports itself back through others, whatever the package."""
    modules = _project_modules()
    names = set(modules)
    graph = {name: _imported_modules(path, names) - {name} for name, path in modules.items()}
    assert _circle(graph) is None


def test_the_circle_test_finds_a_circle() -> None:
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
