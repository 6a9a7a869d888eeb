"""What a search is asked and what it answers: its options, its visitors, its result.

`SearchOptions` is the one frozen value every caller of the breadth-first search passes
(budgets, depth limit, start state, symmetry, threads, which level expander); visitors
receive what the search finds as it goes (each finished level, each property's first
violation, the transitions themselves); `Exploration` is the answer, the same shape for
every strategy that explores (`model.check.reference` gives one too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from model.design import Bounds, Design
    from model.rules import Rule
    from model.system import State
    from model.verdicts import PropertyVerdict, Status

DEFAULT_MAX_STATES: Final = 3_000_000
DEFAULT_MAX_SECONDS: Final = 60.0
BYTES_PER_STATE: Final = 40
"""What one stored state costs the search at most, with its share of a level's buffers
(about 30 bytes measured at 17M states by bench/bench_spin.py, rounded up for safety); the
CLI turns a memory budget into a state budget with it (`fencing.budget`)."""


class Expander(StrEnum):
    """How levels are expanded: chosen by size (auto), always numpy, compiled loops, or
    the native engine."""

    AUTO = "auto"
    """The native engine where it applies and was built (or is worth building, for
    large levels); else numpy for small levels and compiled loops for large ones, or for
    levels of `Tuning.load_from` states when an earlier run already compiled them."""
    NUMPY = "numpy"
    """Never compile: every level by numpy (`model.check.numpy_expander`)."""
    COMPILED = "compiled"
    """Compiled loops (`model.check.compiled_expander`) for every level of `Tuning.load_from`
    states or more."""
    NATIVE = "native"
    """The native engine (`model.check.native_search`: each level expanded, deduplicated and
    sorted in C) for every level of `Tuning.load_from` states or more, where it applies
    (keys of one word, no symmetry, no edge visitor); the other expanders elsewhere."""


@dataclass(frozen=True)
class Tuning:
    """Sizes that change how fast the search runs and how much memory it holds, never what
    it finds (the tests shrink them to exercise every path on small bounds)."""

    chunk_states: int = 1 << 15
    """States of a level expanded together: bounds the memory of decoded columns."""
    parallel_from: int = 4 * (1 << 15)
    """Levels at least this large are expanded on two threads (smaller ones gain nothing)."""
    compile_from: int = 1 << 18
    """Levels at least this large are expanded by compiled loops, compiled for the design
    and bounds if need be; below it, compiling would cost more than it saves."""
    load_from: int = 1 << 13
    """Levels at least this large use compiled loops when an earlier run already compiled
    them (loading them from the cache is cheap); smaller levels use numpy."""
    trim_from: int = 1 << 16
    """After a level with this many successors, freed memory is handed back to the system."""
    links_in_memory: int = 1 << 18
    """The parent links of this many states are kept in memory; past it, every level's
    links go to a temporary file (5 bytes a state), read back only for counterexamples."""
    native_from: int = 1 << 10
    """Levels at least this large use the native engine when an earlier run built it."""
    build_from: int = 1 << 16
    """Levels at least this large are worth building the native engine for (a compiler
    takes about a second)."""
    sorted_up_to: int | None = None
    """One-word keys stay in a sorted array (numpy alone, nothing to load) up to this many
    states; None: the seen set's own default (`model.check.seen.SORTED_UP_TO`)."""


@dataclass(frozen=True)
class SearchOptions:
    """Everything a breadth-first search may be told besides the design and the bounds.

    Budgets: the search stops after `max_states` stored states or `max_seconds` seconds
    (a memory budget is a state budget, `BYTES_PER_STATE` each), and `max_depth` explores
    only runs of at most that many steps (used to show that no shorter run than a
    counterexample violates its property). `start` explores from a reachable state other
    than the initial one (the playground's "finish from here"); counterexamples then start
    there too. `symmetry` explores one state per orbit of worker renamings. `threads`
    expands large levels on that many threads (None: two where a second core is idle),
    and `expander` says which expander runs a level; `tuning` sizes chunks and thresholds.
    Neither threads, expander nor tuning changes the result.
    """

    symmetry: bool = False
    max_states: int = DEFAULT_MAX_STATES
    max_seconds: float = DEFAULT_MAX_SECONDS
    max_depth: int | None = None
    start: State | None = None
    threads: int | None = None
    expander: Expander = Expander.AUTO
    tuning: Tuning = field(default_factory=Tuning)

    def __post_init__(self) -> None:
        if self.max_states < 1:
            raise ValueError(f"max_states must be at least 1, not {self.max_states}")
        if self.max_depth is not None and self.max_depth < 0:
            raise ValueError(f"max_depth must be at least 0, not {self.max_depth}")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be at least 1, not {self.threads}")


@dataclass(frozen=True)
class Progress:
    """Where a running exploration is, reported after each BFS level."""

    depth: int
    states: int
    transitions: int
    frontier: int
    seconds: float


@dataclass(frozen=True)
class EdgeBatch:
    """Transitions of one rule out of one BFS level, for visitors that need the graph itself.

    `sources` and `targets` are packed state keys (targets are concrete successors, before
    any symmetry reduction); `violations` maps each property to a mask over the batch.
    """

    rule: Rule
    sources: np.ndarray
    targets: np.ndarray
    violations: dict[str, np.ndarray]


class Visitor:
    """Receives what a search finds as it goes; override the methods wanted.

    A visitor that sets `wants_edges` is shown every transition (`on_edges`); the search
    then expands levels by numpy, the one expander that reports them.
    """

    wants_edges: bool = False

    def on_level(self, progress: Progress) -> None:
        """A level was expanded and its new states stored."""

    def on_violation(self, name: str, length: int) -> None:
        """The property's first violation was found, by a run of `length` steps."""

    def on_edges(self, batch: EdgeBatch) -> None:
        """One rule's transitions out of part of a level (only if `wants_edges`)."""


@dataclass(frozen=True)
class OnLevel(Visitor):
    """A visitor calling `report` after each level (progress bars, progress lines)."""

    report: Callable[[Progress], None]

    def on_level(self, progress: Progress) -> None:
        self.report(progress)


@dataclass(frozen=True)
class OnEdges(Visitor):
    """A visitor calling `report` with every batch of transitions (the state graph)."""

    report: Callable[[EdgeBatch], None]
    wants_edges: bool = True

    def on_edges(self, batch: EdgeBatch) -> None:
        self.report(batch)


@dataclass(frozen=True)
class Exploration:
    """The result of exploring a design within bounds."""

    design: Design
    bounds: Bounds
    complete: bool
    states: int
    transitions: int
    depth: int
    symmetry: bool
    seconds: float
    verdicts: dict[str, PropertyVerdict]
    level_sizes: tuple[int, ...]
    stopped_by: str | None = None

    def status(self, name: str) -> Status:
        """The property's status: violated, holds, vacuous, or unknown for an incomplete run."""
        return self.verdicts[name].status
