"""Where the native engine runs, and where it must not: a machine without a C compiler
falls back to the other expanders with the same results, a library is never loaded from a
folder another user can write, and the advisor's many small searches never build it."""

from __future__ import annotations

import stat
import subprocess
import warnings
from pathlib import Path

import pytest

from advise import advice
from model.check import native_search
from model.check.expanders import rule_plans
from model.check.explorer import explore
from model.check.keys import WordCodec
from model.check.native_search import EngineText
from model.check.private_cache import CacheWarning
from model.check.search import Expander, SearchOptions, Tuning
from model.design import Bounds
from model.presets import PRESETS
from model.system import System

DESIGN = PRESETS["fencing"].design
BOUNDS = Bounds(3, 2, 5, 3, 1)
EVERY_LEVEL = SearchOptions(expander=Expander.NATIVE, threads=1, tuning=Tuning(load_from=1))
ADVISED_BOUNDS = Bounds(3, 2, 6, 3, 2)
"""Bounds with a level of more than a thousand states (where a default search looks for
an engine built before)."""
BUILT_WHEN_IT_PAYS = SearchOptions(threads=1, tuning=Tuning(native_from=1, build_from=1))
"""Automatic choice, with the engine worth building from the first level on."""


def numpy_alone() -> tuple[int, int, tuple[int, ...], object]:
    """States, transitions, level sizes and verdicts of the numpy path."""
    plain = explore(DESIGN, BOUNDS, SearchOptions(expander=Expander.NUMPY, threads=1))
    return plain.states, plain.transitions, tuple(plain.level_sizes), plain.verdicts


def figures(options: SearchOptions) -> tuple[int, int, tuple[int, ...], object]:
    """The same figures with other options."""
    found = explore(DESIGN, BOUNDS, options)
    return found.states, found.transitions, tuple(found.level_sizes), found.verdicts


def engine_text() -> EngineText:
    """The C text of this design's engine (and the name its library is cached under)."""
    system = System(DESIGN, BOUNDS)
    words = WordCodec.of(system.layout)
    assert words is not None
    return EngineText.of(system, words, rule_plans(system))


@pytest.fixture
def nothing_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """No engine loaded in this process yet (so each test builds or refuses afresh)."""
    monkeypatch.setattr(native_search, "_LOADED", {})


@pytest.fixture
def no_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, nothing_loaded: None) -> None:
    """A machine without a C compiler: no $CC, and nothing on the PATH."""
    monkeypatch.delenv("CC", raising=False)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("FENCING_LAB_CACHE", str(tmp_path / "cache"))


def test_without_a_compiler_the_automatic_choice_searches_as_numpy_does(
    no_compiler: None, tmp_path: Path
) -> None:
    """The engine is not attempted (no warning), the results are numpy's, and nothing is
    built ahead of a search either."""
    assert native_search.compiler() is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = figures(BUILT_WHEN_IT_PAYS)
    assert not [w for w in caught if "native engine" in str(w.message)]
    assert found == numpy_alone()
    assert native_search.build_engine(System(DESIGN, BOUNDS)) is False
    assert not list(tmp_path.rglob("*.so"))


def test_without_a_compiler_the_engine_asked_for_says_why_and_numpy_searches(
    no_compiler: None,
) -> None:
    """Asked for by name, the engine's build fails with one warning naming the missing
    compiler, and the search goes on by the other expanders with the same results."""
    with pytest.warns(UserWarning, match="no C compiler found"):
        found = figures(EVERY_LEVEL)
    assert found == numpy_alone()


def test_the_engine_gives_numpys_results_where_a_compiler_is_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, nothing_loaded: None
) -> None:
    """The counterpart of the tests above: with a compiler the engine is built (into the
    private folder, mode 0700) and agrees with numpy."""
    if native_search.compiler() is None:
        pytest.skip("no C compiler on this machine")
    monkeypatch.setenv("FENCING_LAB_CACHE", str(tmp_path))
    assert figures(EVERY_LEVEL) == numpy_alone()
    folder = tmp_path / "fencing-lab" / "kernels"
    (library,) = folder.glob("levels_*.so")
    assert library == engine_text().library_in(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert native_search.is_built(engine_text())


def plant_library(folder: Path, marker: Path) -> None:
    """A shared library under the exact name of this design's engine that leaves a marker
    file as soon as it is loaded."""
    source = folder / "planted.c"
    source.write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void planted(void) {\n"
        f'    FILE *f = fopen("{marker}", "w"); if (f) fclose(f);\n'
        "}\n"
    )
    cc = native_search.compiler()
    assert cc is not None
    library = engine_text().library_in(folder)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    source.unlink()


def test_a_library_in_a_folder_other_users_can_write_is_never_loaded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, nothing_loaded: None
) -> None:
    """The cache folder under a parent anyone can write is refused with a warning: the
    library planted there under the engine's exact name is not loaded, the engine is built
    in a temporary folder of its own instead, and nothing is written to the shared one."""
    if native_search.compiler() is None:
        pytest.skip("no C compiler on this machine")
    shared = tmp_path / "shared"
    folder = shared / "fencing-lab" / "kernels"
    folder.mkdir(parents=True)
    shared.chmod(0o777)
    marker = tmp_path / "planted-library-ran"
    plant_library(folder, marker)
    before = sorted(folder.iterdir())
    monkeypatch.setenv("FENCING_LAB_CACHE", str(shared))
    with pytest.warns(CacheWarning, match="can be written by other users"):
        found = figures(EVERY_LEVEL)
    assert found == numpy_alone()
    assert not marker.exists()
    assert sorted(folder.iterdir()) == before
    assert engine_text().digest in native_search._LOADED  # the engine did run, built apart


def test_the_planted_library_would_run_if_loaded(tmp_path: Path) -> None:
    """The marker of the test above can appear: loading the planted library leaves it."""
    if native_search.compiler() is None:
        pytest.skip("no C compiler on this machine")
    import ctypes

    marker = tmp_path / "planted-library-ran"
    plant_library(tmp_path, marker)
    ctypes.CDLL(str(engine_text().library_in(tmp_path)))
    assert marker.exists()


def test_the_advisors_searches_never_ask_for_the_native_engine(
    monkeypatch: pytest.MonkeyPatch, nothing_loaded: None
) -> None:
    """The advisor explores many small designs by numpy alone: it never looks for, builds
    or loads the engine, where a default search of the same design does."""
    asked: list[str] = []

    def refuse(name: str):  # type: ignore[no-untyped-def]
        def called(*arguments, **keywords):  # type: ignore[no-untyped-def]
            asked.append(name)
            raise AssertionError(f"{name} called")

        return called

    for name in ("compiler", "is_built", "load_engine"):
        monkeypatch.setattr(native_search, name, refuse(name))
    monkeypatch.setattr(advice, "_FINISHED", {})
    settled = advice.explore_settled(DESIGN, ADVISED_BOUNDS, 10**6)
    assert settled.complete and asked == []
    assert max(settled.level_sizes) >= Tuning().native_from  # a default search would ask
    with pytest.raises(AssertionError):
        explore(DESIGN, ADVISED_BOUNDS, SearchOptions(threads=1))
    assert asked
