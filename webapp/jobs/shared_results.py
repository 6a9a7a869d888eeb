"""Heavy results computed once for every process of the server: explorations, proofs, advice.

A class opens the same designs at once, and a server of several processes would otherwise
explore, prove or advise on each design once per process. So each such result is kept on
disk, keyed by what it was computed from (its kind, the design, the bounds and the budgets,
and a fingerprint of the code that computes it), and a process that needs one reads it from
there; with a small memory layer in front, so a page run that finds its result reads no file.
While one process computes a result, the others that need the same one wait for it (a
`flock` on a lock file of that key), then read it: an exploration is made once per class.

What is read could run code (the results are pickled), so the rules of the compiled loops'
folder hold here too, and more:

- the folder is this user's private one (`private_folders`: 0700, refused when a link, not
  ours, writable by others, or under a parent another user could rename it in), checked
  when the cache is opened;
- a file is read only if it is a regular file (opened without following links) owned by
  this user and writable by nobody else, no larger than `MAX_ENTRY_BYTES`, and its header
  names its key and the SHA-256 of its contents, which must match;
- a file is written whole under a temporary name and renamed into place (`os.replace`), so
  a reader finds the old file, the new one or none, never half of one;
- the folder is bounded: past `MAX_BYTES`, the files used longest ago are deleted (reading
  one marks it used) until it is back under nine tenths of the bound.

The folder is shared only by the processes `FENCING_LAB_SHARED` names (`private_folders`);
a process alone keeps its results in memory. Nothing here imports Streamlit; a page passes
what to show while it waits.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import pickle
import stat
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from webapp.jobs.private_folders import shared_folder

T = TypeVar("T")

FOLDER_NAME: Final = "results"
FORMAT: Final = b"fencing-lab result 1\n"
"""The first line of every result file (a new format gets a new line)."""
SUFFIX: Final = ".result"
LOCK_SUFFIX: Final = ".lock"
MAX_BYTES: Final = 256 * 2**20
"""Most bytes the folder's results take together; the ones used longest ago go first."""
MAX_ENTRY_BYTES: Final = 32 * 2**20
"""Largest result kept (an exploration of a million states pickles to about a kilobyte)."""
MEMORY_ENTRIES: Final = 512
"""Results a process keeps in memory in front of the folder (the oldest used go first)."""
POLL_SECONDS: Final = 0.05
"""How often a process waiting for another's result looks again."""
WAIT_NOTE_SECONDS: Final = 0.25
"""How often a waiting process calls its `while_waiting` (where a page shows a note)."""
CODE_PACKAGES: Final = ("model", "proofs", "advise", "classroom")
"""The packages whose code computes the shared results: any change to them makes new keys."""
ROOT: Final = Path(__file__).resolve().parents[2]


@functools.cache
def code_fingerprint() -> str:
    """The SHA-256 of the source of every package that computes results, and the Python
    version: a result is never read by code that would have computed another."""
    digest = hashlib.sha256(FORMAT + repr(sys.version_info[:2]).encode())
    for package in CODE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class ResultKey:
    """What a result was computed from: its kind and the values that make it (a design,
    bounds, budgets), which must have a stable `repr`."""

    kind: str
    parts: tuple[object, ...]

    @functools.cached_property
    def digest(self) -> str:
        """The file name of this result: the SHA-256 of the code, the kind and the parts."""
        text = f"{code_fingerprint()}\n{self.kind}\n{self.parts!r}"
        return hashlib.sha256(text.encode()).hexdigest()


def verdicts_key(design: object, bounds: object) -> ResultKey:
    """What the grading verdicts of a design at some bounds are kept under (only complete
    ones are kept: those are facts of the design and bounds, whatever the budget)."""
    return ResultKey("verdicts", (design, bounds))


@dataclass(frozen=True)
class Found:
    """A result that was found (its value may itself be None)."""

    value: Any


class SharedResults:
    """Results shared through one private folder, with a memory layer; with no folder
    (refused, or none asked for), the memory layer alone."""

    def __init__(
        self,
        folder: Path | None,
        max_bytes: int = MAX_BYTES,
        max_entry_bytes: int = MAX_ENTRY_BYTES,
        memory_entries: int = MEMORY_ENTRIES,
    ) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes
        self._memory: OrderedDict[str, Found] = OrderedDict()
        self._memory_entries = memory_entries
        self._lock = threading.Lock()
        self.computed = 0
        """How many results this process computed (a test reads it)."""

    # ----- reading ----------------------------------------------------------------------------

    def get(self, key: ResultKey, remember: bool = True) -> Found | None:
        """The result of `key` from memory or the folder, or None when there is none
        (`remember=False`: the folder only, for callers that keep their own memory)."""
        if remember:
            with self._lock:
                found = self._memory.get(key.digest)
                if found is not None:
                    self._memory.move_to_end(key.digest)
                    return found
        found = self._read(key)
        if found is not None and remember:
            self._remember(key, found)
        return found

    def _read(self, key: ResultKey) -> Found | None:
        """The result file of `key`, if it passes every check (see the module's text)."""
        if self.folder is None:
            return None
        path = self.folder / (key.digest + SUFFIX)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not _trusted(info) or info.st_size > self.max_entry_bytes:
                return None
            with os.fdopen(os.dup(fd), "rb") as file:
                data = file.read(self.max_entry_bytes + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        payload = _payload(data, key)
        if payload is None:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last to be evicted
        return Found(pickle.loads(payload))

    def _remember(self, key: ResultKey, found: Found) -> None:
        """Keep a result in memory (bounded: the one used longest ago is forgotten)."""
        with self._lock:
            self._memory[key.digest] = found
            self._memory.move_to_end(key.digest)
            while len(self._memory) > self._memory_entries:
                self._memory.popitem(last=False)

    # ----- writing ----------------------------------------------------------------------------

    def put(self, key: ResultKey, value: object, remember: bool = True) -> bool:
        """Keep a result in memory (unless `remember=False`) and in the folder (atomically);
        whether it reached the folder (not when there is none, it is too large, or the disk
        refused it)."""
        if remember:
            self._remember(key, Found(value))
        if self.folder is None:
            return False
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        data = _header(key, payload) + payload
        if len(data) > self.max_entry_bytes:
            return False
        if not self._write(self.folder / (key.digest + SUFFIX), data):
            return False
        self.evict()
        return True

    def _write(self, path: Path, data: bytes) -> bool:
        """Write `data` under a temporary name beside `path`, then rename it into place."""
        assert self.folder is not None
        temporary = self.folder / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(temporary, flags, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return False
        return True

    def evict(self) -> int:
        """Delete the results used longest ago while the folder holds more than its bound
        (down to nine tenths of it); how many were deleted."""
        if self.folder is None:
            return 0
        entries = []
        for path in self.folder.glob("*" + SUFFIX):
            with contextlib.suppress(OSError):
                info = path.lstat()
                entries.append((info.st_mtime, info.st_size, path))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return 0
        deleted = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes * 0.9:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                deleted += 1
            total -= size
        return deleted

    # ----- computing once ---------------------------------------------------------------------

    def computed_once(
        self,
        key: ResultKey,
        compute: Callable[[], T],
        keep: Callable[[T], bool] = lambda value: True,
        while_waiting: Callable[[float], None] = lambda seconds: None,
        wait: float = 60.0,
        remember: bool = True,
    ) -> T:
        """The result of `key`: found, or computed here while other processes needing it
        wait, then kept for all of them when `keep` says so. A process that has waited
        `wait` seconds for another's result computes it itself. `while_waiting` gets the
        seconds waited so far, a few times a second, while another computes; `remember`
        says whether the memory layer is used too."""
        found = self.get(key, remember)
        if found is not None:
            return found.value  # type: ignore[no-any-return]
        with self._computing(key, while_waiting, wait):
            found = self.get(key, remember)
            if found is not None:
                return found.value  # type: ignore[no-any-return]
            value = compute()
            self.computed += 1
            if keep(value):
                self.put(key, value, remember)
            return value

    @contextmanager
    def _computing(
        self, key: ResultKey, while_waiting: Callable[[float], None], wait: float
    ) -> Iterator[None]:
        """Hold the key's lock file while the block runs (waiting for another process or
        thread that holds it); without a folder, or after `wait` seconds, go on without."""
        if self.folder is None:
            yield
            return
        path = self.folder / (key.digest + LOCK_SUFFIX)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            yield
            return
        try:
            locked = _lock_waiting(fd, while_waiting, wait)
            try:
                yield
            finally:
                if locked:
                    with contextlib.suppress(OSError):
                        path.unlink()
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def forget_memory(self) -> None:
        """Empty the memory layer (a test's second process, without starting one)."""
        with self._lock:
            self._memory.clear()


def _lock_waiting(fd: int, while_waiting: Callable[[float], None], wait: float) -> bool:
    """Lock `fd`, waiting at most `wait` seconds and calling `while_waiting` meanwhile;
    whether the lock was taken."""
    started = time.monotonic()
    noted = started
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        now = time.monotonic()
        if now - started >= wait:
            return False
        if now - noted >= WAIT_NOTE_SECONDS or noted == started:
            while_waiting(now - started)
            noted = now
        time.sleep(POLL_SECONDS)


def _trusted(info: os.stat_result) -> bool:
    """Whether a result file may be read: a regular file of this user nobody else can write."""
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_uid == os.geteuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def _header(key: ResultKey, payload: bytes) -> bytes:
    """The first lines of a result file: the format, the key, the contents' SHA-256."""
    return FORMAT + f"{key.digest}\n{hashlib.sha256(payload).hexdigest()}\n".encode()


def _payload(data: bytes, key: ResultKey) -> bytes | None:
    """The pickled result in a file's bytes, when its header is exactly this key's and its
    contents match the SHA-256 the header names; None otherwise."""
    lines = data.split(b"\n", 3)
    if len(lines) != 4 or lines[0] + b"\n" != FORMAT or lines[1] != key.digest.encode():
        return None
    payload = lines[3]
    if hashlib.sha256(payload).hexdigest().encode() != lines[2]:
        return None
    return payload


def open_shared_results(environ: Mapping[str, str] = os.environ) -> SharedResults:
    """The results shared by the processes `FENCING_LAB_SHARED` names (in memory only for a
    process alone, or when the folder is refused)."""
    return SharedResults(shared_folder(FOLDER_NAME, "explorations, proofs and advice are", environ))


_SHARED: list[SharedResults] = []
_SHARED_LOCK = threading.Lock()


def shared_results() -> SharedResults:
    """The process's shared results, opened at first use."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(open_shared_results())
        return _SHARED[0]
