"""The heavy-work slots as plain code: taken, waited for, refused in time, always given back;
shared through lock files by every process of a server, and freed when a holder is killed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from model.check.private_cache import CacheWarning
from tests.slots import free_slots
from webapp.jobs import slots
from webapp.jobs.private_folders import SHARED_ENV

ROOT = Path(__file__).resolve().parents[1]


def test_a_free_slot_is_taken_at_once_and_given_back() -> None:
    waits: list[float] = []
    with slots.held_slot(1.0, waits.append) as admitted:
        assert admitted
        assert free_slots() == slots.HEAVY_AT_ONCE - 1
    assert waits == []
    assert free_slots() == slots.HEAVY_AT_ONCE


def test_a_request_waits_then_is_refused_when_no_slot_comesfree_slots() -> None:
    for _ in range(slots.HEAVY_AT_ONCE):
        assert slots.SLOTS.acquire(timeout=30)
    try:
        waits: list[float] = []
        with slots.held_slot(0.6, waits.append) as admitted:
            assert not admitted
        assert len(waits) >= 2
        assert waits == sorted(waits, reverse=True)
        assert all(0 < left <= 0.6 for left in waits)
    finally:
        for _ in range(slots.HEAVY_AT_ONCE):
            slots.SLOTS.release()
    assert free_slots() == slots.HEAVY_AT_ONCE


def test_a_slot_freed_while_waiting_is_taken_and_given_back_after_a_failure() -> None:
    for _ in range(slots.HEAVY_AT_ONCE):
        assert slots.SLOTS.acquire(timeout=30)
    timer = threading.Timer(0.3, slots.SLOTS.release)
    timer.start()
    try:
        with pytest.raises(RuntimeError), slots.held_slot(30.0) as admitted:
            assert admitted
            raise RuntimeError("the work failed")
    finally:
        timer.join()
        for _ in range(slots.HEAVY_AT_ONCE - 1):
            slots.SLOTS.release()
    assert free_slots() == slots.HEAVY_AT_ONCE


# ----- slots shared by the processes of a server ------------------------------------------------

HOLDER = """
import sys, time
from webapp.jobs.slots import SLOTS
taken = sum(SLOTS.acquire(blocking=False) for _ in range(int(sys.argv[1])))
print(taken, flush=True)
time.sleep(600)
"""
"""A server process that takes some slots and keeps them until it is killed."""


def _holder(folder: Path, count: int) -> tuple[subprocess.Popen[str], int]:
    """Start a process sharing the slots of `folder` that takes `count` of them; how many
    it got."""
    environment = {**os.environ, SHARED_ENV: str(folder.parent), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(count)],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline())


def _end(process: subprocess.Popen[str]) -> None:
    """Kill a holder outright (SIGKILL: no chance to give anything back)."""
    process.kill()
    process.wait(timeout=30)


def test_processes_naming_one_folder_share_the_slots(tmp_path: Path) -> None:
    """Two processes and this one share two slots; a killed holder's slot comes free."""
    folder = tmp_path / "server" / "slots"
    folder.mkdir(mode=0o700, parents=True)
    os.chmod(folder.parent, 0o700)
    here = slots.Slots(slots.HEAVY_AT_ONCE, lambda: folder)
    first, got = _holder(folder, 1)
    try:
        assert got == 1
        second, got = _holder(folder, 2)  # only one is left for it
        try:
            assert got == 1
            assert not here.acquire(blocking=False)
            assert not here.acquire(timeout=0.3)
        finally:
            _end(second)
        assert here.acquire(timeout=10)  # the kernel gave the killed process's slot back
        assert not here.acquire(blocking=False)
        here.release()
    finally:
        _end(first)
    assert here.acquire(blocking=False) and here.acquire(blocking=False)
    assert not here.acquire(blocking=False)
    here.release()
    here.release()
    with pytest.raises(ValueError):
        here.release()


def test_threads_of_one_process_share_the_folder_slots_too(tmp_path: Path) -> None:
    """At most two threads hold a slot at once, and every thread gets one in turn."""
    folder = tmp_path / "slots"
    folder.mkdir(mode=0o700)
    shared = slots.Slots(slots.HEAVY_AT_ONCE, lambda: folder)
    inside: list[int] = []
    most: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        assert shared.acquire(timeout=60)
        with lock:
            inside.append(1)
            most.append(len(inside))
        time.sleep(0.05)
        with lock:
            inside.pop()
        shared.release()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(most) == 8 and max(most) == slots.HEAVY_AT_ONCE


def test_which_slots_the_environment_chooses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert slots.slots_folder({}) is None
    monkeypatch.setenv("FENCING_LAB_CACHE", str(tmp_path / "cache"))
    machine = slots.slots_folder({SHARED_ENV: "machine"})
    assert machine == tmp_path / "cache" / "fencing-lab" / "slots"
    assert stat.S_IMODE(machine.stat().st_mode) == 0o700
    named = slots.slots_folder({SHARED_ENV: str(tmp_path / "server")})
    assert named == tmp_path / "server" / "slots" and named.is_dir()
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.warns(CacheWarning, match="can be written by other users"):
        assert slots.slots_folder({SHARED_ENV: str(shared)}) is None
    link = tmp_path / "link"
    link.symlink_to(machine)
    with pytest.warns(CacheWarning, match="symbolic link"):
        assert slots.slots_folder({SHARED_ENV: str(link)}) is None
