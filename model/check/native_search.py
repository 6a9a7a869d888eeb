"""The native level engine: each level of the search expanded, deduplicated and sorted in C.

`model.check.native_source` writes the C text of a design's rules and the engine around them; a
C compiler builds it into a shared library, kept in this user's private folder
(`model.check.private_cache`) named by the sha256 of its text and compiler flags, so a design
and bounds are built once (about a second, as pan's gcc step) and loaded afterwards in a
few milliseconds, without numba. With no private folder the library is built in a
temporary folder for this process alone. A machine without a C compiler, states wider
than two words (more than 2^76 of them), symmetry and edge visitors use the numpy and
numba expanders instead; the tests check that every engine gives identical results.

`NativeLevels` is one search's engine: it holds the seen set (in C memory, freed by
`close`) and turns a level's sorted keys into the next level's new states in key order,
each with its first parent and rule, and the level's first violations.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import Executor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from model.check.expanders import Chunk, NewStates, RulePlan, Settled, rule_plans
from model.check.keys import KeyCodec, Keys, WordCodec
from model.check.native_source import Plan, search_source
from model.check.private_cache import private_folder
from model.check.search import Expander, Tuning
from model.system import System

FLAGS: Final = ("-O2", "-shared", "-fPIC", "-fno-strict-aliasing")
"""How the engine is compiled (part of the name it is cached under)."""
BUILD_SECONDS: Final = 300
"""The longest a compiler may take before the build is given up."""
SLICE_ROWS: Final = 1 << 17
"""Rows the engine expands in one call (a few milliseconds): between calls the search
checks its time budget, and Ctrl-C is heard."""
OUT_OF_MEMORY: Final = -2
"""What the engine returns when the system refuses it memory."""
OUT_OF_TIME: Final = -1
"""What a lane returns when the level was given up (its time ran out)."""

_LOADING = threading.Lock()
"""One library is built and loaded at a time (sessions of the web app share the process)."""
_LOADED: dict[str, ctypes.CDLL] = {}
"""Libraries loaded in this process, by the digest of their text."""

_P = ctypes.c_void_p
_SIGNATURES: Final = {
    "fl_open": ([], _P),
    "fl_close": ([_P], None),
    "fl_held": ([_P], ctypes.c_int64),
    "fl_bytes": ([_P], ctypes.c_int64),
    "fl_tables": ([_P], ctypes.c_int64),
    "fl_hold": ([_P, _P, ctypes.c_int64], ctypes.c_int64),
    "fl_found": ([_P], ctypes.c_int64),
    "fl_forget": ([_P], None),
    "fl_take": ([_P, _P, _P, _P], ctypes.c_int),
    "fl_expand": (
        [_P, ctypes.c_uint, ctypes.c_uint, _P, ctypes.c_int64, *[_P] * 6, ctypes.c_int64],
        ctypes.c_int,
    ),
}


class BuildError(RuntimeError):
    """The C compiler refused the engine's text (its message says why)."""


def compiler() -> str | None:
    """The C compiler to build with ($CC, else cc or gcc), or None when there is none."""
    for name in (os.environ.get("CC"), "cc", "gcc"):
        if name and (found := shutil.which(name)):
            return found
    return None


def engine_plans(plans: tuple[RulePlan, ...]) -> list[Plan]:
    """What the engine's loops must do: per rule, the properties to check."""
    return [
        (plan.rule_id, [p.name for p in plan.violable], [p.name for p in plan.triggerable])
        for plan in plans
    ]


@dataclass(frozen=True)
class EngineText:
    """The C text of one design's engine and the name it is cached under."""

    source: str
    digest: str

    @staticmethod
    def of(system: System, words: WordCodec, plans: tuple[RulePlan, ...]) -> EngineText:
        """The text for these rules and keys (its digest covers the compiler flags too)."""
        source = search_source(system, words, engine_plans(plans))
        digest = hashlib.sha256("\0".join([source, *FLAGS]).encode()).hexdigest()
        return EngineText(source, digest)

    def library_in(self, folder: Path) -> Path:
        """Where the built library lives in a folder."""
        return folder / f"levels_{self.digest}.so"


def is_built(text: EngineText) -> bool:
    """Whether this engine was built before (loading it then costs milliseconds)."""
    if text.digest in _LOADED:
        return True
    folder = private_folder()
    return folder is not None and text.library_in(folder).is_file()


def _partial(path: Path) -> Path:
    """Where this thread writes a file before it takes its place."""
    return path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def _write_atomically(path: Path, data: bytes) -> None:
    """Put exactly these bytes in the file (readers see the old file or the whole new one)."""
    partial = _partial(path)
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    partial.replace(path)


def _compile(text: EngineText, folder: Path) -> Path:
    """Build the library into the folder (atomically: readers see none or all of it)."""
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler found (set CC, or install gcc)")
    library = text.library_in(folder)
    source = library.with_suffix(".c")
    partial = _partial(library)
    _write_atomically(source, text.source.encode())
    try:
        done = subprocess.run(
            [cc, *FLAGS, "-o", str(partial), str(source)],
            capture_output=True,
            text=True,
            timeout=BUILD_SECONDS,
            check=False,
        )
        if done.returncode != 0:
            raise BuildError(f"{cc} failed: {done.stderr.strip()[-2000:]}")
        partial.replace(library)
    finally:
        partial.unlink(missing_ok=True)  # a build cut short leaves nothing behind
    return library


def _open(path: Path) -> ctypes.CDLL:
    """Load a built library and declare its functions."""
    library = ctypes.CDLL(str(path))
    for name, (arguments, result) in _SIGNATURES.items():
        function = getattr(library, name)
        function.argtypes = arguments
        function.restype = result
    return library


def load_engine(text: EngineText) -> ctypes.CDLL:
    """The engine's library: loaded, or built first (in the private folder when there is
    one, else in a temporary folder removed once it is loaded)."""
    with _LOADING:
        if text.digest in _LOADED:
            return _LOADED[text.digest]
        folder = private_folder()
        if folder is not None:
            library = text.library_in(folder)
            if not library.is_file():
                library = _compile(text, folder)
            loaded = _open(library)
        else:
            with tempfile.TemporaryDirectory(prefix="fencing-lab-") as scratch:
                loaded = _open(_compile(text, Path(scratch)))
        _LOADED[text.digest] = loaded
        return loaded


def _address(array: np.ndarray) -> int:
    """The address of a contiguous array's first element."""
    assert array.flags.c_contiguous
    return int(array.ctypes.data)


class NativeLevels:
    """One search's native engine: its seen set, and each level's new states (`expand`).

    Its keys are words of `WordCodec` (unsigned), in the same order as the search's other
    keys; `take_over` converts what the search held before the engine took it over.
    """

    def __init__(
        self,
        library: ctypes.CDLL,
        names: tuple[str, ...],
        rule_type: np.dtype,
        codec: KeyCodec,
        words: WordCodec,
    ) -> None:
        self.library = library
        self.names = names
        self.rule_type = rule_type
        self.codec = codec
        self.words = words
        self.handle = library.fl_open()
        if not self.handle:
            raise MemoryError("no memory for the seen set")

    def close(self) -> None:
        """Free the seen set (the engine cannot be used afterwards)."""
        if self.handle:
            self.library.fl_close(self.handle)
            self.handle = None

    @property
    def count(self) -> int:
        """Keys held."""
        return int(self.library.fl_held(self.handle))

    @property
    def nbytes(self) -> int:
        """Memory held by the seen set's tables."""
        return int(self.library.fl_bytes(self.handle))

    @property
    def tables(self) -> int:
        """How many tables the seen set is split into."""
        return int(self.library.fl_tables(self.handle))

    def take_over(self, seen: Keys, frontier: Keys) -> np.ndarray:
        """Hold the keys seen so far (`KeyCodec` keys); the frontier as the engine's words."""
        held = self.words.encode(self.codec, seen)
        if self.library.fl_hold(self.handle, _address(held), len(held)) < 0:
            raise MemoryError("no memory for the seen set")
        return self.words.encode(self.codec, frontier)

    def expand(
        self,
        level: Keys,
        settled: Settled,
        out_of_time: Callable[[], bool],
        pool: Executor | None,
    ) -> Chunk | None:
        """Expand a level (its words, sorted): what it found, or None if the time ran out
        first; its new states then wait for `take`.

        The engine runs `SLICE_ROWS` rows at a time, so the time budget and Ctrl-C are
        heard between slices. With a pool, a second thread fills the other half of the
        tables at once (both threads run the rules; only the first notes properties)."""
        if len(level) >= 2**31:
            raise ValueError("a level must hold fewer than 2^31 states")
        level = np.ascontiguousarray(level, dtype=np.uint64)
        assert level.ndim == (1 if self.words.words == 1 else 2)
        count = len(self.names)
        watched = [
            np.array([n not in settled.violated for n in self.names], dtype=np.uint8),
            np.array([n not in settled.exercised for n in self.names], dtype=np.uint8),
        ]
        first_rule = np.full(count, -1, dtype=np.int64)
        first_row = np.full(count, -1, dtype=np.int64)
        triggered = np.zeros(count, dtype=np.uint8)
        transitions = np.zeros(2, dtype=np.int64)
        given_up = threading.Event()

        def lane(index: int, lanes: int) -> int:
            look, watch = watched if index == 0 else (np.zeros(count, np.uint8),) * 2
            while True:
                if given_up.is_set() or out_of_time():
                    given_up.set()
                    return OUT_OF_TIME
                outcome = int(
                    self.library.fl_expand(
                        self.handle,
                        index,
                        lanes,
                        _address(level),
                        len(level),
                        *(_address(a) for a in (look, watch, first_rule, first_row, triggered)),
                        _address(transitions[index:]),
                        SLICE_ROWS,
                    )
                )
                if outcome != 0:
                    return outcome

        if pool is None:
            outcomes = [lane(0, 1)]
        else:
            other = pool.submit(lane, 1, 2)
            try:
                outcomes = [lane(0, 2)]
            except BaseException:
                given_up.set()  # the other thread stops before the engine can be closed
                wait([other])
                raise
            outcomes.append(other.result())
        if OUT_OF_MEMORY in outcomes:
            self.library.fl_forget(self.handle)
            raise MemoryError("no memory for the level's new states")
        if OUT_OF_TIME in outcomes:
            self.library.fl_forget(self.handle)
            return None
        chunk = Chunk(0, transitions=int(transitions[0]))
        for p, name in enumerate(self.names):
            if first_rule[p] >= 0:
                chunk.violations[name] = (int(first_rule[p]), int(first_row[p]))
            if triggered[p]:
                chunk.exercised.add(name)
        return chunk

    def take(self) -> NewStates:
        """The last level's new states, in key order, with their first parents' rows and
        rules (the engine's buffers are freed)."""
        found = int(self.library.fl_found(self.handle))
        shape = (found,) if self.words.words == 1 else (found, self.words.words)
        keys = np.empty(shape, dtype=np.uint64)
        rows = np.empty(found, dtype=np.int32)
        rules = np.empty(found, dtype=self.rule_type)
        if self.library.fl_take(self.handle, _address(keys), _address(rows), _address(rules)):
            raise MemoryError("no memory to sort the level's new states")
        return NewStates(keys, rows, rules)


class NativePolicy:
    """Says from which level the native engine runs a search, building it when it pays.

    Asked for (`Expander.NATIVE`), it runs from levels of `Tuning.load_from` states; by
    default (`Expander.AUTO`) from levels of `Tuning.native_from` states once built, and it
    is built for a level of `Tuning.build_from` states. A build that fails says why in a
    warning and the search goes on with the other expanders. Once running, the engine
    expands every later level of the search.
    """

    def __init__(
        self,
        system: System,
        codec: KeyCodec,
        plans: tuple[RulePlan, ...],
        choice: Expander,
        tuning: Tuning,
        applicable: bool,
    ) -> None:
        self.system = system
        self.codec = codec
        self.words = WordCodec.of(system.layout)
        self.plans = plans
        self.choice = choice
        self.tuning = tuning
        self.usable = applicable and self.words is not None
        self.usable &= choice in (Expander.AUTO, Expander.NATIVE)
        self.engine: NativeLevels | None = None
        self.text: EngineText | None = None
        self.built: bool | None = None

    def for_level(self, size: int) -> NativeLevels | None:
        """The engine for a level of `size` states, or None for the other expanders."""
        if self.engine is None and self.usable and self._wants(size):
            try:
                library = load_engine(self._text())
            except (BuildError, OSError, subprocess.SubprocessError) as error:
                warnings.warn(f"native engine unavailable: {error}", stacklevel=3)
                self.usable = False
            else:
                names = tuple(p.name for p in self.system.properties)
                rule_type = np.dtype(np.uint8 if len(self.system.rules) <= 256 else np.uint16)
                assert self.words is not None
                self.engine = NativeLevels(library, names, rule_type, self.codec, self.words)
        return self.engine

    def close(self) -> None:
        """Free the engine's memory."""
        if self.engine is not None:
            self.engine.close()

    def _text(self) -> EngineText:
        """The engine's C text (written once)."""
        if self.text is None:
            assert self.words is not None
            self.text = EngineText.of(self.system, self.words, self.plans)
        return self.text

    def _wants(self, size: int) -> bool:
        """Whether a level of this size should be expanded by the engine."""
        if self.choice is Expander.NATIVE:
            return size >= self.tuning.load_from
        if size < self.tuning.native_from:
            return False
        if size >= self.tuning.build_from:
            if compiler() is not None or self._built_before():
                return True
            self.usable = False
            return False
        return self._built_before()

    def _built_before(self) -> bool:
        """Whether an earlier run built this engine (checked once)."""
        if self.built is None:
            self.built = is_built(self._text())
        return self.built


def build_engine(system: System) -> bool:
    """Build (or load) the system's native engine ahead of a search, as pan is compiled
    before it searches; False when it cannot run (states wider than two words, or no
    compiler)."""
    words = WordCodec.of(system.layout)
    if words is None:
        return False
    text = EngineText.of(system, words, rule_plans(system))
    if compiler() is None and not is_built(text):
        return False
    load_engine(text)
    return True


def native_applicable(system: System, symmetry: bool, edges: bool) -> bool:
    """Whether the native engine can run a search: states in one or two words, no
    symmetry, no edge visitor."""
    return WordCodec.of(system.layout) is not None and not symmetry and not edges
