"""Compiled code is loaded only from this user's private folder, and only if it is exactly
what this version writes: a planted module never runs, a shared folder is refused."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from model.check import kernels, private_cache
from model.check.expanders import rule_plans
from model.check.keys import KeyCodec
from model.check.private_cache import CacheWarning, parent_refusal, refusal
from model.design import Bounds
from model.presets import PRESETS
from model.system import System

ROOT = Path(__file__).resolve().parents[1]
SYSTEM = System(PRESETS["fencing"].design, Bounds(2, 2, 4, 2, 1))
CODEC = KeyCodec.of(SYSTEM.layout)
PLANS = [
    (plan.rule_id, [p.name for p in plan.violable], [p.name for p in plan.triggerable])
    for plan in rule_plans(SYSTEM)
]


def folder_under(base: Path) -> Path:
    """The kernels folder the cache uses when FENCING_LAB_CACHE is `base`."""
    return base / "fencing-lab" / "kernels"


def plant(folder: Path, marker: Path) -> Path:
    """A module under the exact name of this design's loops, plus a line that leaves a
    marker file when run, and a marker saying it is compiled."""
    source = kernels.module_source(SYSTEM, CODEC, PLANS)
    path = folder / f"kernels_{kernels._digest(source)}.py"
    path.write_text(source + f"\nopen({str(marker)!r}, 'w').close()\n")
    path.with_suffix(".ready").touch()
    return path


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """FENCING_LAB_CACHE in a fresh folder, and this design's loops not loaded yet."""
    monkeypatch.setenv("FENCING_LAB_CACHE", str(tmp_path))
    for source in (
        kernels.module_source(SYSTEM, CODEC, PLANS),
        kernels.module_source(SYSTEM, CODEC, PLANS, cache=False),
    ):
        digest = kernels._digest(source)
        for name in (f"fencing_lab_kernels_{digest}", f"fencing_lab_kernels_{digest}_in_memory"):
            monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def run_one_level(loops: dict[int, kernels.Kernel]) -> int:
    """Successors of the initial state by every loop (a loop that works gives some)."""
    keys = CODEC.pack(SYSTEM.initial())
    count = len(SYSTEM.properties)
    total = 0
    for loop in loops.values():
        total += loop(
            keys,
            np.empty_like(keys),
            np.empty(1, dtype=np.int32),
            np.full(count, -1, dtype=np.int64),
            np.zeros(count, dtype=bool),
            np.zeros(count, dtype=bool),
            np.zeros(count, dtype=bool),
        )
    return total


@pytest.mark.slow
def test_a_planted_module_under_the_loops_name_is_never_run(fresh: Path) -> None:
    """Same file name, other content: overwritten with this version's text, never imported."""
    folder = folder_under(fresh)
    folder.mkdir(parents=True, mode=0o700)
    marker = fresh / "planted-line-ran"
    path = plant(folder, marker)
    assert not kernels.is_compiled(SYSTEM, CODEC, PLANS)
    loops = kernels.load_kernels(SYSTEM, CODEC, PLANS)
    assert not marker.exists()
    assert path.read_text() == kernels.module_source(SYSTEM, CODEC, PLANS)
    assert run_one_level(loops) > 0
    assert kernels.is_compiled(SYSTEM, CODEC, PLANS)


@pytest.mark.slow
def test_a_folder_other_users_can_write_is_refused(fresh: Path) -> None:
    """Mode 0777: a warning, nothing read from or written to it, loops compiled in memory."""
    folder = folder_under(fresh)
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    marker = fresh / "planted-line-ran"
    path = plant(folder, marker)
    planted = path.read_bytes()
    with pytest.warns(CacheWarning, match="can be written by other users"):
        assert not kernels.is_compiled(SYSTEM, CODEC, PLANS)
    with pytest.warns(CacheWarning, match="compiling in memory"):
        loops = kernels.load_kernels(SYSTEM, CODEC, PLANS)
    assert not marker.exists()
    assert path.read_bytes() == planted
    assert run_one_level(loops) > 0


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
@pytest.mark.slow
def test_a_folder_owned_by_another_user_is_refused(fresh: Path) -> None:
    """Mode 0700 but owned by nobody (uid 65534): refused, the planted module never runs."""
    folder = folder_under(fresh)
    folder.mkdir(parents=True, mode=0o700)
    marker = fresh / "planted-line-ran"
    plant(folder, marker)
    os.chown(folder, 65534, 65534)
    with pytest.warns(CacheWarning, match="owned by user 65534"):
        loops = kernels.load_kernels(SYSTEM, CODEC, PLANS)
    assert not marker.exists()
    assert run_one_level(loops) > 0


def fake_stat(mode: int, uid: int) -> os.stat_result:
    """A stat result with only a mode and an owner."""
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


@pytest.mark.parametrize(
    "mode, uid, refused",
    [
        (stat.S_IFDIR | 0o700, 1000, None),
        (stat.S_IFDIR | 0o755, 1000, None),
        (stat.S_IFDIR | 0o700, 1001, "owned by user 1001"),
        (stat.S_IFDIR | 0o770, 1000, "can be written by other users (mode 770)"),
        (stat.S_IFDIR | 0o757, 1000, "can be written by other users (mode 757)"),
        (stat.S_IFDIR | 0o1777, 1000, "can be written by other users"),
        (stat.S_IFLNK | 0o777, 1000, "symbolic link"),
        (stat.S_IFREG | 0o600, 1000, "not a folder"),
    ],
)
def test_a_cache_folder_must_be_the_users_alone(mode: int, uid: int, refused: str | None) -> None:
    reason = refusal(Path("/x"), fake_stat(mode, uid), 1000)
    assert reason is None if refused is None else refused in str(reason)


@pytest.mark.parametrize(
    "mode, uid, refused",
    [
        (stat.S_IFDIR | 0o755, 0, False),
        (stat.S_IFDIR | 0o700, 1000, False),
        (stat.S_IFDIR | 0o1777, 0, False),  # like /tmp: only an entry's owner renames it
        (stat.S_IFDIR | 0o777, 0, True),
        (stat.S_IFDIR | 0o775, 1000, True),
        (stat.S_IFDIR | 0o755, 1001, True),
    ],
)
def test_no_parent_lets_another_user_swap_the_folder(mode: int, uid: int, refused: bool) -> None:
    assert (parent_refusal(Path("/x"), fake_stat(mode, uid), 1000) is not None) == refused


def test_a_home_that_cannot_be_written_falls_back_to_a_private_temporary_folder(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fallback is named after the user id, created 0700, and refused if planted."""
    blocker = fresh / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("FENCING_LAB_CACHE", str(blocker))
    temporary = fresh / "tmp"
    temporary.mkdir()
    temporary.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    folder = private_cache.private_folder()
    assert folder == temporary / f"fencing-lab-{os.geteuid()}"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o777)
    with pytest.warns(CacheWarning, match="can be written by other users"):
        assert private_cache.private_folder() is None


LOAD_TWICE = """
import json, sys
from tests.test_private_cache import CODEC, PLANS, SYSTEM
from model.check import kernels
loops = kernels.load_kernels(SYSTEM, CODEC, PLANS)
hits = sum(sum(loop.stats.cache_hits.values()) for loop in loops.values())
misses = sum(sum(loop.stats.cache_misses.values()) for loop in loops.values())
print(json.dumps({"hits": hits, "misses": misses, "loops": len(loops)}))
"""


def load_in_a_new_process(cache: Path, **extra: str) -> tuple[dict[str, int], str]:
    """Load this design's loops in a fresh interpreter: numba's cache hits and misses."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(FENCING_LAB_CACHE=str(cache), PYTHONPATH=str(ROOT), **extra)
    done = subprocess.run(
        [sys.executable, "-c", LOAD_TWICE],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
    )
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


@pytest.mark.slow
def test_the_next_run_loads_the_loops_without_compiling(tmp_path: Path) -> None:
    """The first process compiles and caches; the second finds every loop in numba's cache,
    in the private folder, and does not rewrite the module."""
    first, _ = load_in_a_new_process(tmp_path)
    assert first["misses"] == first["loops"] and first["hits"] == 0
    folder = folder_under(tmp_path)
    (module,) = folder.glob("kernels_*.py")
    written = module.stat().st_mtime_ns
    second, _ = load_in_a_new_process(tmp_path)
    assert second == {"hits": first["loops"], "misses": 0, "loops": first["loops"]}
    assert module.stat().st_mtime_ns == written
    assert list((folder / "numba").rglob("*.nbi")), "numba's index is in the private folder"
    for private in (folder, folder / "numba"):
        assert stat.S_IMODE(private.stat().st_mode) == 0o700


def test_a_shared_numba_cache_folder_is_refused(tmp_path: Path) -> None:
    """NUMBA_CACHE_DIR open to other users: refused, numba caches in the private folder."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    script = (
        "import model.check.probing as probing\n"
        "from numba.core import config\n"
        "print(probing.CACHE, config.CACHE_DIR)\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(shared), "PYTHONPATH": str(ROOT)}
    env["FENCING_LAB_CACHE"] = str(tmp_path / "private")
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=ROOT,
    )
    assert "NUMBA_CACHE_DIR refused" in done.stderr
    assert done.stdout.split() == ["True", str(folder_under(tmp_path / "private") / "numba")]
    assert list(shared.iterdir()) == []
