"""Exercise sets checked by the model once per content, in the background, for the process.

Checking a set (can every exercise be solved?) explores designs and may take up to its
budget. A visit must not wait for it: the set files are checked one at a time by one
background thread, itself under the heavy-work limit, and the results are kept by the
SHA-256 of the file's bytes. A visit reads the files (bounded, cheap), finds each result,
or learns that the set is being checked; a changed file has another hash and is checked
again, an unchanged one never.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Final

from classroom.data import ExerciseSet, ExerciseSetError
from classroom.sets import (
    DEFAULT_SET,
    FOLDER_ENV,
    check_set_bytes,
    folder_files,
    read_bounded,
)
from webapp.jobs.slots import held_slot

Checked = ExerciseSet | ExerciseSetError
"""A set file's outcome: the set, or the problems that keep it from being used."""

MAX_CHECKED: Final = 64
"""Most results kept (the oldest is forgotten first): a folder holds at most 20 sets."""
BACKGROUND_WAIT: Final = 600.0
"""How long the background checker waits for a heavy-work slot before it asks again."""


def digest_of(data: bytes) -> str:
    """The key of a set file's content: the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def _named(found: Checked | None, source: str) -> Checked | None:
    """A result under the file name it was looked up with (the same bytes may be renamed)."""
    if isinstance(found, ExerciseSet) and found.source != source:
        return replace(found, source=source)
    return found


class SetChecker:
    """Set files checked once per content by one background thread, under the heavy-work limit.

    `lookup` never runs a check: it returns the result, or None after queueing the bytes.
    `runs` counts the checks made, so a test can see that a content is checked once.
    """

    def __init__(self, check: Callable[[bytes, str], Checked] = check_set_bytes) -> None:
        self._check = check
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._done: dict[str, Checked] = {}
        self._queued: dict[str, tuple[bytes, str]] = {}
        self._thread: threading.Thread | None = None
        self._current: str | None = None
        self._closed = False
        self.runs = 0

    def lookup(self, data: bytes, source: str) -> Checked | None:
        """The outcome of these bytes if they were checked; otherwise None, and they are queued
        (in place of an older content of the same file still waiting, so the queue stays
        as short as the folder)."""
        digest = digest_of(data)
        with self._lock:
            found = self._done.get(digest)
            if found is None and not self._closed and digest not in self._queued:
                for older, (_, name) in list(self._queued.items()):
                    if name == source and older != self._current:
                        del self._queued[older]
                self._queued[digest] = (data, source)
                self._start()
                self._changed.notify_all()
        return _named(found, source)

    def wait(self, data: bytes, source: str, timeout: float) -> Checked | None:
        """The outcome of these bytes, waiting at most `timeout` seconds for their check."""
        found = self.lookup(data, source)
        if found is not None:
            return found
        digest = digest_of(data)
        with self._lock:
            self._changed.wait_for(lambda: digest in self._done or self._closed, timeout)
            return _named(self._done.get(digest), source)

    def idle(self, timeout: float) -> bool:
        """Wait until nothing is queued (at most `timeout` seconds); whether that happened."""
        with self._lock:
            return self._changed.wait_for(lambda: not self._queued, timeout)

    @property
    def working(self) -> bool:
        """Whether the background thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the background thread after the check it is making (for tests)."""
        with self._lock:
            self._closed = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join()

    def _start(self) -> None:
        """Start the background thread once (the lock is held)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="set-checks", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        """Check queued files one at a time, oldest first, until closed."""
        while True:
            with self._lock:
                self._changed.wait_for(lambda: bool(self._queued) or self._closed)
                if self._closed:
                    return
                digest, (data, source) = next(iter(self._queued.items()))
                self._current = digest
            found = self._checked(data, source)
            with self._lock:
                self._queued.pop(digest, None)
                self._current = None
                self._done[digest] = found
                while len(self._done) > MAX_CHECKED:
                    del self._done[next(iter(self._done))]
                self._changed.notify_all()

    def _checked(self, data: bytes, source: str) -> Checked:
        """One check, made when a heavy-work slot is free (the visitors' work comes first)."""
        while True:
            with held_slot(wait=BACKGROUND_WAIT) as admitted:
                if admitted:
                    self.runs += 1
                    return self._check(data, source)


CHECKER = SetChecker()
"""The process's checker: every visitor's page finds the same results."""
_WARMED = threading.Event()


def read_set_file(path: Path) -> bytes | ExerciseSetError:
    """A set file's bytes (bounded, regular files only), or why it cannot be read."""
    try:
        return read_bounded(path)
    except ExerciseSetError as error:
        return error


def teacher_files() -> tuple[list[Path], str | None]:
    """The teachers' folder's set files (from the environment), and a warning, if any."""
    folder = os.environ.get(FOLDER_ENV, "")
    return folder_files(Path(folder)) if folder else ([], None)


def warm() -> None:
    """Queue the default set and the teachers' sets for checking, once per process.

    Called when the server starts serving, so the first visit finds them checked.
    """
    if _WARMED.is_set():
        return
    _WARMED.set()
    for path in [DEFAULT_SET, *teacher_files()[0]]:
        data = read_set_file(path)
        if isinstance(data, bytes):
            CHECKER.lookup(data, path.name)
