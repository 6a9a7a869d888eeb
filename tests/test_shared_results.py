"""Heavy results shared by a server's processes: computed once under concurrent writers, read
whole or not at all, bounded in size, and never loaded from a file someone else could have
written (a planted or tampered result never runs)."""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from model.check.private_cache import CacheWarning
from webapp.jobs import shared_results
from webapp.jobs.private_folders import SHARED_ENV
from webapp.jobs.shared_results import (
    FORMAT,
    SUFFIX,
    Found,
    ResultKey,
    SharedResults,
    open_shared_results,
)

ROOT = Path(__file__).resolve().parents[1]
KEY = ResultKey("exploration", ("fencing", 2, 3))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A private results folder."""
    made = tmp_path / "server" / "results"
    made.mkdir(parents=True, mode=0o700)
    os.chmod(made.parent, 0o700)
    return made


class Planted:
    """A value whose unpickling leaves a marker file: proof that a file was loaded."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.marker, "w"))


def test_a_result_kept_by_one_process_is_read_by_another(folder: Path) -> None:
    first, second = SharedResults(folder), SharedResults(folder)
    assert first.get(KEY) is None
    assert first.put(KEY, {"states": 3268})
    assert second.get(KEY) == Found({"states": 3268})
    assert second.get(ResultKey("exploration", ("fencing", 2, 4))) is None
    assert stat.S_IMODE((folder / (KEY.digest + SUFFIX)).stat().st_mode) == 0o600
    assert SharedResults(None).get(KEY) is None  # a process alone keeps nothing on disk


def test_a_value_of_none_is_a_result_too(folder: Path) -> None:
    SharedResults(folder).put(KEY, None)
    assert SharedResults(folder).get(KEY) == Found(None)


WRITER = """
import sys, time
from pathlib import Path
from webapp.jobs.shared_results import ResultKey, SharedResults

folder, log = Path(sys.argv[1]), Path(sys.argv[2])
def compute():
    with log.open("a") as out:
        out.write("computed\\n")
    time.sleep(0.5)
    return {"states": 3268, "by": sys.argv[3]}

print(SharedResults(folder).computed_once(ResultKey("exploration", ("fencing", 2, 3)), compute))
"""


def test_processes_needing_one_result_at_once_compute_it_once(folder: Path) -> None:
    """Four processes ask at the same moment: one computes, the others wait and read it."""
    log = folder.parent / "computed.log"
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder), str(log), str(n)],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    outputs = [writer.communicate(timeout=120)[0].strip() for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * 4
    assert log.read_text() == "computed\n"
    assert len(set(outputs)) == 1 and "'states': 3268" in outputs[0]
    assert not list(folder.glob("*.lock")) and not list(folder.glob(".*.tmp"))


def test_threads_needing_one_result_compute_it_once(folder: Path) -> None:
    results = SharedResults(folder)
    start = threading.Barrier(6)
    calls: list[int] = []
    got: list[object] = []

    def compute() -> dict[str, int]:
        calls.append(1)
        threading.Event().wait(0.3)
        return {"states": 1}

    def need() -> None:
        start.wait()
        got.append(results.computed_once(KEY, compute))

    threads = [threading.Thread(target=need) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert calls == [1] and got == [{"states": 1}] * 6 and results.computed == 1


def test_a_result_not_worth_keeping_is_computed_again(folder: Path) -> None:
    """A page that found no free slot gives nothing to keep: the next visitor computes."""
    results = SharedResults(folder)
    answers = iter([None, {"states": 1}])
    assert results.computed_once(KEY, lambda: next(answers), keep=lambda v: v is not None) is None
    assert results.get(KEY) is None
    assert results.computed_once(KEY, lambda: next(answers), keep=lambda v: v is not None) == {
        "states": 1
    }


def test_a_waiter_is_told_while_another_computes_and_gives_up_after_its_wait(
    folder: Path,
) -> None:
    results = SharedResults(folder)
    lock = os.open(folder / (KEY.digest + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    import fcntl

    fcntl.flock(lock, fcntl.LOCK_EX)  # another process is computing it and never finishes
    waited: list[float] = []
    try:
        value = results.computed_once(KEY, lambda: "mine", while_waiting=waited.append, wait=0.6)
    finally:
        os.close(lock)
    assert value == "mine" and len(waited) >= 2 and waited == sorted(waited)


WRITER_OF_MANY = """
import sys
from pathlib import Path
from webapp.jobs.shared_results import ResultKey, SharedResults

results = SharedResults(Path(sys.argv[1]), max_bytes=40_000)
for n in range(60):
    results.put(ResultKey("exploration", (sys.argv[2], n)), bytes([n]) * 3_000)
"""


def test_concurrent_writers_of_many_results_keep_the_folder_bounded_and_whole(
    folder: Path,
) -> None:
    """Three processes write 60 results each while this one reads: every result read is
    whole and right, and the folder ends under its bound."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER_OF_MANY, str(folder), f"w{n}"], cwd=ROOT, env=environment
        )
        for n in range(3)
    ]
    reader = SharedResults(folder, memory_entries=0)
    seen = 0
    while any(writer.poll() is None for writer in writers):
        for n in range(3):
            for index in range(60):
                found = reader.get(ResultKey("exploration", (f"w{n}", index)))
                if found is not None:
                    assert found.value == bytes([index]) * 3_000
                    seen += 1
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0, 0]
    sizes = [path.stat().st_size for path in folder.glob("*" + SUFFIX)]
    assert sum(sizes) <= 40_000 and len(sizes) >= 5
    assert not list(folder.glob(".*.tmp"))
    assert seen > 0


def test_the_results_used_longest_ago_are_evicted_first(folder: Path) -> None:
    results = SharedResults(folder, max_bytes=11_000, memory_entries=0)
    keys = [ResultKey("advice", (n,)) for n in range(3)]
    for number, key in enumerate(keys):
        results.put(key, b"x" * 3_000)
        os.utime(folder / (key.digest + SUFFIX), (1_000 + number, 1_000 + number))
    assert results.get(keys[0]) is not None  # read now: used last
    results.put(ResultKey("advice", (3,)), b"x" * 3_000)  # over the bound
    assert results.get(keys[1]) is None
    assert results.get(keys[0]) is not None and results.get(keys[2]) is not None


def test_a_result_larger_than_an_entry_may_be_is_kept_in_memory_only(folder: Path) -> None:
    results = SharedResults(folder, max_entry_bytes=1_000)
    assert not results.put(KEY, b"x" * 2_000)
    assert results.get(KEY) == Found(b"x" * 2_000)
    assert SharedResults(folder).get(KEY) is None


def _plant(folder: Path, key: ResultKey, marker: Path, honest_header: bool = True) -> Path:
    """A result file of `key` whose loading would leave `marker`."""
    payload = pickle.dumps(Planted(str(marker)))
    path = folder / (key.digest + SUFFIX)
    header = shared_results._header(key, payload) if honest_header else FORMAT
    path.write_bytes(header + payload)
    os.chmod(path, 0o600)
    return path


def test_a_file_others_could_write_is_never_loaded(folder: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = _plant(folder, KEY, marker)
    os.chmod(path, 0o620)  # the group may write it
    assert SharedResults(folder).get(KEY) is None
    os.chmod(path, 0o602)
    assert SharedResults(folder).get(KEY) is None
    os.chmod(path, 0o600)
    assert SharedResults(folder).get(KEY) is not None and marker.exists()  # the control


def test_a_link_another_owner_or_a_tampered_file_is_never_loaded(
    folder: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    elsewhere = tmp_path / "elsewhere.result"
    _plant(folder, KEY, marker).rename(elsewhere)
    (folder / (KEY.digest + SUFFIX)).symlink_to(elsewhere)
    assert SharedResults(folder).get(KEY) is None
    (folder / (KEY.digest + SUFFIX)).unlink()
    path = _plant(folder, KEY, marker)
    path.write_bytes(path.read_bytes() + b"tampered")
    assert SharedResults(folder).get(KEY) is None
    _plant(folder, KEY, marker, honest_header=False)
    assert SharedResults(folder).get(KEY) is None
    other = ResultKey("exploration", ("other",))
    _plant(folder, other, marker).rename(folder / (KEY.digest + SUFFIX))  # another key's file
    assert SharedResults(folder).get(KEY) is None
    path = _plant(folder, KEY, marker)
    os.chown(path, 65534, 65534)  # owned by nobody
    assert SharedResults(folder).get(KEY) is None
    assert not marker.exists()


def test_keys_are_the_same_in_every_process_and_change_with_the_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process (another hash seed) names a result the same; other code does not."""
    script = (
        "from model.presets import PRESETS; from model.design import REFERENCE_BOUNDS;"
        "from webapp.jobs.shared_results import ResultKey;"
        "print(ResultKey('exploration', (PRESETS['fencing'].design, REFERENCE_BOUNDS)).digest)"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    from model.design import REFERENCE_BOUNDS
    from model.presets import PRESETS

    here = ResultKey("exploration", (PRESETS["fencing"].design, REFERENCE_BOUNDS))
    assert digests == {here.digest}
    monkeypatch.setattr(shared_results, "code_fingerprint", lambda: "other code")
    assert ResultKey("exploration", (PRESETS["fencing"].design, REFERENCE_BOUNDS)).digest not in (
        digests
    )


def test_the_environment_says_which_processes_share_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert open_shared_results({}).folder is None
    assert open_shared_results({SHARED_ENV: str(tmp_path / "server")}).folder == (
        tmp_path / "server" / "results"
    )
    monkeypatch.setenv("FENCING_LAB_CACHE", str(tmp_path / "cache"))
    machine = open_shared_results({SHARED_ENV: "machine"}).folder
    assert machine == tmp_path / "cache" / "fencing-lab" / "results"
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.warns(CacheWarning, match="can be written by other users"):
        assert open_shared_results({SHARED_ENV: str(shared)}).folder is None


@pytest.mark.slow
def test_a_random_and_a_hypothesis_search_of_one_design_are_kept_apart() -> None:
    """The pages' searches by random runs are kept under their strategy too: the same design,
    bounds, runs and seed searched at random and with Hypothesis are two results."""
    from fencing.strategies import HYPOTHESIS, RANDOM
    from model.design import REFERENCE_BOUNDS
    from model.presets import PRESETS
    from webapp.screens.cache import random_search_when_free

    design = PRESETS["lease-only"].design
    found = {
        strategy: random_search_when_free(design, REFERENCE_BOUNDS, 20, 1, "a search", strategy)
        for strategy in (RANDOM, HYPOTHESIS, RANDOM)
    }
    assert {strategy: search.strategy for strategy, search in found.items() if search} == {
        RANDOM: RANDOM,
        HYPOTHESIS: HYPOTHESIS,
    }
