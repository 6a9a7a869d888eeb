"""The machine's slots for heavy work, so a server stays responsive for a whole class.

Expensive work (an exploration that is not cached yet, a proof, the check of an exercise
set) runs only while it holds one of `HEAVY_AT_ONCE` slots. A server of several processes
(`make serve-class WORKERS=N`) shares the slots between all of them, so the machine's two
cores run at most two heavy jobs whatever the number of processes: each slot is a lock file
in a private folder, held with `flock` while the work runs. The kernel gives a lock back
when its holder exits, however it exits, so a killed process never keeps a slot.

`FENCING_LAB_SHARED` says which processes share the slots (`private_folders`): every server
this user runs on the machine, those naming one folder, or none (slots of this process
alone). A folder that is not private is refused with a warning, and the process keeps slots
of its own.

This module is plain code: a page waits for a slot through `webapp.screens.limits` (which
tells its visitor it waits), the background set checker through `held_slot` directly.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from webapp.jobs.private_folders import shared_folder

HEAVY_AT_ONCE: Final = 2
"""Expensive computations allowed at the same time (the machine has two cores)."""
WAIT_SECONDS: Final = 15.0
"""How long a visitor's request waits for a free slot before it is told the server is busy."""
WAIT_STEP_SECONDS: Final = 0.25
"""How often a waiting request looks for a free slot (and may update what it shows)."""
POLL_SECONDS: Final = 0.05
"""How often a request waiting for a slot of the machine tries the lock files again."""
FOLDER_NAME: Final = "slots"


def slots_folder(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The folder of the shared slots' lock files, or None for slots of this process alone."""
    return shared_folder(FOLDER_NAME, "the heavy-work slots are", environ)


class Slots:
    """`count` slots, taken and given back like a semaphore's: by this process alone, or by
    every process that uses the same folder (decided from the environment at first use)."""

    def __init__(self, count: int, folder: Callable[[], Path | None] = slots_folder) -> None:
        self.count = count
        self._find_folder = folder
        self._decided = False
        self._folder: Path | None = None
        self._local = threading.BoundedSemaphore(count)
        self._lock = threading.Lock()
        self._held: list[int] = []

    @property
    def folder(self) -> Path | None:
        """The lock files' folder (None: the slots are this process's alone)."""
        with self._lock:
            if not self._decided:
                self._folder = self._find_folder()
                self._decided = True
            return self._folder

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take a slot: at once, or waiting up to `timeout` seconds (forever when None)."""
        folder = self.folder
        if folder is None:
            return self._local.acquire(blocking, timeout)
        ends = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._take_file(folder):
                return True
            if not blocking:
                return False
            left = POLL_SECONDS if ends is None else min(POLL_SECONDS, ends - time.monotonic())
            if left <= 0:
                return False
            time.sleep(left)

    def _take_file(self, folder: Path) -> bool:
        """Lock the first free slot file (each try opens its own file, so threads of one
        process exclude each other as processes do)."""
        for index in range(self.count):
            path = folder / f"slot-{index}.lock"
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            with self._lock:
                self._held.append(fd)
            return True
        return False

    def release(self) -> None:
        """Give a slot back (ValueError when this process holds none, as a semaphore says)."""
        if self.folder is None:
            self._local.release()
            return
        with self._lock:
            if not self._held:
                raise ValueError("no heavy-work slot is held by this process")
            fd = self._held.pop()
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


SLOTS: Final = Slots(HEAVY_AT_ONCE)


def _nothing(seconds_left: float) -> None:
    """A waiter that shows nothing while it waits."""


def take_slot(wait: float, while_waiting: Callable[[float], None] = _nothing) -> bool:
    """Take a slot within `wait` seconds if one comes free (True), calling `while_waiting`
    with the seconds left before each short wait; False when none came free in time or the
    server is shutting down."""
    if SLOTS.acquire(blocking=False):
        return True
    ends = time.monotonic() + wait
    while threading.main_thread().is_alive():
        left = ends - time.monotonic()
        if left <= 0:
            return False
        while_waiting(left)
        if SLOTS.acquire(timeout=min(WAIT_STEP_SECONDS, left)):
            return True
    return False


@contextmanager
def held_slot(wait: float, while_waiting: Callable[[float], None] = _nothing) -> Iterator[bool]:
    """Yield whether a slot was taken within `wait` seconds; a slot taken is always given back."""
    taken = False
    try:
        taken = take_slot(wait, while_waiting)
        yield taken
    finally:
        if taken:
            SLOTS.release()
