"""Exhaustive breadth-first exploration of every interleaving within the bounds.

The explorer evaluates the same rules as the step interpreter, but on many states at
once: each state column is a numpy array, so a guard is one vectorised comparison and an
effect one vectorised update. States are stored as int64 keys with a bit field per
column, one word or several when the state space is wider (`model.keys`); a successor's
key is its parent's plus the weighted change of the columns the action writes. A level
is expanded in chunks (on two threads where it pays), a chunk's columns are decoded only
when a rule reads them, and a property is only evaluated on the rules that can violate
it: evaluating its condition on symbolic variables (`model.expression`) shows which rules
fold it to the constant False. Large levels are expanded by loops compiled from the same
symbolic form (`model.kernels`). New states are found by probing a hash set of every key
seen, in the order of the search, so the first parent wins without re-sorting what was
seen. Counterexamples are lists of action instances, reconstructed from parent links and
replayed through the interpreter.
"""

from __future__ import annotations

import bisect
import ctypes
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np

from model.design import Bounds, Design
from model.keys import KeyCodec, Keys, SeenSet, concat

if TYPE_CHECKING:
    from model.kernels import Kernel
from model.layout import Layout, Vars, symbolic_view
from model.properties import Property
from model.rules import Action, Rule
from model.symmetry import Canonicalizer
from model.system import State, System
from model.verdicts import PropertyVerdict, Status, exploration_status

DEFAULT_MAX_STATES: Final = 3_000_000
DEFAULT_MAX_SECONDS: Final = 60.0
CHUNK_STATES: Final = 1 << 15
"""States of a level expanded together: bounds the memory of decoded columns."""
PARALLEL_FROM: Final = 4 * CHUNK_STATES
"""Levels at least this large are expanded on two threads (smaller ones gain nothing)."""
COMPILE_FROM: Final = 1 << 18
"""Levels at least this large are expanded by compiled loops (`model.kernels`), compiled
for the design and bounds if need be; below it, compiling would cost more than it saves."""
TRIM_FROM: Final = 1 << 16
"""After a level with this many successors, freed memory is handed back to the system."""
LOAD_FROM: Final = 1 << 13
"""Levels at least this large use compiled loops when an earlier run already compiled
them (loading them from the cache is cheap); smaller levels use the numpy path."""
BYTES_PER_STATE: Final = 40
"""What one stored state costs the explorer at most, with its share of a level's buffers
(about 30 bytes measured at 17M states by bench/bench_spin.py, rounded up for safety); the
CLI sizes its default state budget with it."""


@dataclass(frozen=True)
class Progress:
    """Where a running exploration is, reported after each BFS level."""

    depth: int
    states: int
    transitions: int
    frontier: int
    seconds: float


ProgressCallback = Callable[[Progress], None]


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


EdgeVisitor = Callable[[EdgeBatch], None]


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


@dataclass(frozen=True)
class RulePlan:
    """A rule with the properties it can violate and those it can exercise at all.

    Found once per design by evaluating each property on the rule with symbolic state
    variables: where the term helpers fold the condition to False, the design makes it
    impossible, and the explorer never evaluates it there.
    """

    rule_id: int
    rule: Rule
    violable: tuple[Property, ...]
    triggerable: tuple[Property, ...]


def rule_plans(system: System) -> tuple[RulePlan, ...]:
    """The plan of every rule that can ever be enabled, in rule order."""
    view = symbolic_view(system.layout)
    plans = []
    for rule_id, rule in enumerate(system.rules):
        if rule.guard(view) is False:
            continue
        violable = tuple(p for p in system.properties if p.violated(view, rule) is not False)
        triggerable = tuple(p for p in system.properties if p.triggered(view, rule) is not False)
        plans.append(RulePlan(rule_id, rule, violable, triggerable))
    return tuple(plans)


@dataclass
class _Chunk:
    """What expanding one chunk of a level found (merged in a fixed order afterwards)."""

    start: int
    successors: dict[int, tuple[Keys, np.ndarray]] = field(default_factory=dict)
    transitions: int = 0
    violations: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per property, the first violating (rule id, frontier row) in this chunk."""
    exercised: set[str] = field(default_factory=set)
    edges: list[EdgeBatch] = field(default_factory=list)


@dataclass
class _Search:
    """Mutable bookkeeping of one run (kept private to this module)."""

    seen: SeenSet
    parents: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    states: int = 0
    transitions: int = 0
    first_violation: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    exercised: set[str] = field(default_factory=set)
    stopped_by: str | None = None

    def parent(self, index: int) -> int:
        """The parent link of a state (-1 for the start)."""
        level = bisect.bisect_right(self.offsets, index) - 1
        return int(self.parents[level][index - self.offsets[level]])

    def action(self, index: int) -> int:
        """The rule id that first reached a state."""
        level = bisect.bisect_right(self.offsets, index) - 1
        return int(self.actions[level][index - self.offsets[level]])


class _Columns(Sequence[np.ndarray]):
    """Columns of a chunk's states, decoded from their keys on first use and cached."""

    def __init__(self, codec: KeyCodec, keys: Keys) -> None:
        self._codec = codec
        self._keys = keys
        self.cache: dict[int, np.ndarray] = {}

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        if i not in self.cache:
            self.cache[i] = self._codec.column(self._keys, i)
        return self.cache[i]

    def __len__(self) -> int:
        return len(self._codec.strides)


class _Rows(Sequence[np.ndarray]):
    """Columns of the chunk's states selected by `rows`: taken from the chunk's decoded
    columns when present, else decoded from the selected keys alone."""

    def __init__(self, whole: _Columns, codec: KeyCodec, keys: Keys, rows: np.ndarray) -> None:
        self._whole = whole
        self._codec = codec
        self.keys = keys[rows]
        self._rows = rows
        self._cache: dict[int, np.ndarray] = {}

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        if i not in self._cache:
            if i in self._whole.cache:
                self._cache[i] = self._whole.cache[i][self._rows]
            else:
                self._cache[i] = self._codec.column(self.keys, i)
        return self._cache[i]

    def __len__(self) -> int:
        return len(self._whole)


def decode(layout: Layout, keys: np.ndarray) -> list[np.ndarray]:
    """Column arrays of the states with these packed numbers (`Layout.pack`, int64)."""
    return [
        (keys // stride) % size for stride, size in zip(layout.strides, layout.sizes, strict=True)
    ]


def _as_mask(condition: object, count: int) -> np.ndarray:
    """A guard's value as a boolean array over the states (constants broadcast)."""
    return np.broadcast_to(np.asarray(condition, dtype=bool), (count,))


def _successor_keys(codec: KeyCodec, parents: Keys, view: Vars, changes: dict[str, object]) -> Keys:
    """Parent keys plus each changed column's stride x (new - old), in its word."""
    index = codec.layout.index
    if not codec.wide:
        total: np.ndarray | int = 0
        for column, value in changes.items():
            i = index[column]
            if codec.layout.sizes[i] > 1:
                change = codec.strides[i] * (np.asarray(value, dtype=np.int64) - view[column])
                total = total + change
        return parents + total
    keys = parents.copy()
    for column, value in changes.items():
        i = index[column]
        if codec.layout.sizes[i] > 1:
            change = codec.strides[i] * (np.asarray(value, dtype=np.int64) - view[column])
            keys[:, codec.word_of[i]] += change
    return keys


def _c_library() -> ctypes.CDLL | None:
    """The C library, if it is glibc (which can hand freed memory back to the system)."""
    try:
        library = ctypes.CDLL("libc.so.6")
        library.malloc_trim.argtypes = [ctypes.c_size_t]
        return library
    except (OSError, AttributeError):
        return None


_LIBC = _c_library()
_ARENA_MAX: Final = -8
"""glibc's mallopt parameter for the number of heaps threads allocate from."""


def share_one_arena() -> None:
    """Make threads allocate from the main heap (glibc gives each thread its own arena
    otherwise, where a level's freed buffers would stay resident beside the main one's)."""
    if _LIBC is not None:
        _LIBC.mallopt(_ARENA_MAX, 1)


def release_free_memory() -> None:
    """Give the memory of a finished level's buffers back to the system (glibc keeps freed
    blocks otherwise), so the peak of the next level starts from the states alone."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def default_threads() -> int:
    """Two threads where a second core is idle (two cores or more, and the last minute's
    load leaves one free), else one: a busy core makes a second thread cost more than it
    gains (bench/bench_spin.py measures both)."""
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = 0.0
    return 2 if cores >= 2 and cores - busy >= 1 else 1


class Explorer:
    """Breadth-first search over one design within bounds."""

    def __init__(
        self,
        system: System,
        symmetry: bool = False,
        max_states: int = DEFAULT_MAX_STATES,
        max_seconds: float = DEFAULT_MAX_SECONDS,
        progress: ProgressCallback | None = None,
        max_depth: int | None = None,
        start: State | None = None,
        on_edges: EdgeVisitor | None = None,
        threads: int | None = None,
        compiled: bool | None = None,
    ) -> None:
        self.system = system
        self.on_edges = on_edges
        self.layout = system.layout
        self.codec = KeyCodec.of(self.layout)
        self.symmetry = symmetry
        self.canonicalizer = Canonicalizer(self.layout) if symmetry else None
        self.max_states = max_states
        self.max_seconds = max_seconds
        self.progress = progress
        self.max_depth = max_depth
        self.start = start if start is not None else system.initial()
        self.plans = rule_plans(system)
        self.threads = threads if threads is not None else default_threads()
        self.kernels: dict[int, Kernel] | None = None
        self.compilable = on_edges is None
        self.cached_kernels: bool | None = None
        self.compiled = compiled
        self.parent_type = np.int32 if max_states < 2**31 else np.int64
        self.action_type = np.min_scalar_type(max(len(system.rules) - 1, 0))

    def run(self) -> Exploration:
        """Explore every reachable state (or up to a budget) and collect the verdicts."""
        started = time.perf_counter()
        search = _Search(SeenSet(self.codec, self.threads))
        pool = None
        if self.threads > 1:
            share_one_arena()
            pool = ThreadPoolExecutor(self.threads)
        try:
            first = self.codec.pack(self.start)
            frontier = self._admit(search, first, np.full(1, -1), np.zeros(1, np.int64), 0, None)
            level_sizes = [1]
            depth = 0
            while len(frontier):
                if self.max_depth is not None and depth >= self.max_depth:
                    search.stopped_by = f"depth limit of {self.max_depth} reached"
                    break
                offset = search.states - len(frontier)
                level = self._expand(search, frontier, offset, depth, started, pool)
                if level is None:
                    break
                keys, sources, rule_of = level
                del frontier
                frontier = self._admit(search, keys, sources, rule_of, offset, pool)
                large = len(keys) >= TRIM_FROM
                del keys, sources, rule_of, level
                if large:
                    release_free_memory()
                if len(frontier):
                    depth += 1
                    level_sizes.append(len(frontier))
                if self.progress:
                    self.progress(
                        Progress(
                            depth,
                            search.states,
                            search.transitions,
                            len(frontier),
                            time.perf_counter() - started,
                        )
                    )
                if search.stopped_by:
                    break
        finally:
            if pool is not None:
                pool.shutdown()
        del search.seen
        return Exploration(
            design=self.system.design,
            bounds=self.system.bounds,
            complete=search.stopped_by is None,
            states=search.states,
            transitions=search.transitions,
            depth=depth,
            symmetry=self.symmetry,
            seconds=time.perf_counter() - started,
            verdicts=self._verdicts(search),
            level_sizes=tuple(level_sizes),
            stopped_by=search.stopped_by,
        )

    # ----- expanding a level ------------------------------------------------------------

    def _chunks(self, size: int) -> Iterator[tuple[int, int]]:
        """Row ranges of a level, in order."""
        for begin in range(0, size, CHUNK_STATES):
            yield begin, min(size, begin + CHUNK_STATES)

    def _expand(
        self,
        search: _Search,
        frontier: Keys,
        offset: int,
        depth: int,
        started: float,
        pool: ThreadPoolExecutor | None,
    ) -> tuple[Keys, np.ndarray, np.ndarray] | None:
        """Successor keys in rule order (then row order), their source rows and rule ids.

        None if the time budget ran out. The order is the one a single pass over the rules
        would produce, whatever the chunks and threads, so the first parent of a new state
        and the first violation of a property do not depend on them.
        """
        ranges = list(self._chunks(len(frontier)))
        known = dict(search.first_violation)
        if self._wants_kernels(len(frontier)):
            try:
                self.kernels = self._compile()
            except Exception as error:  # whatever the compiler refuses, the numpy path runs
                warnings.warn(f"compiled loops unavailable, using numpy: {error}", stacklevel=2)
                self.compilable = False

        def work(bounds: tuple[int, int]) -> _Chunk | None:
            if time.perf_counter() - started > self.max_seconds:
                return None
            return self._expand_chunk(frontier, bounds, known, search.exercised)

        if pool is not None and len(frontier) >= PARALLEL_FROM:
            chunks = list(pool.map(work, ranges))
        else:
            chunks = [work(r) for r in ranges]
        if any(chunk is None for chunk in chunks) or (
            time.perf_counter() - started > self.max_seconds
        ):
            search.stopped_by = f"time budget of {self.max_seconds:g} s reached"
            return None
        done = [chunk for chunk in chunks if chunk is not None]
        del chunks
        merged = self._merge(search, done, offset, depth)
        if len(merged[1]) >= TRIM_FROM:
            release_free_memory()  # the chunks' buffers, before the seen set needs memory
        return merged

    def _kernel_plans(self) -> list[tuple[int, list[str], list[str]]]:
        """What the compiled loops must do: per rule, the properties to check."""
        return [
            (plan.rule_id, [p.name for p in plan.violable], [p.name for p in plan.triggerable])
            for plan in self.plans
        ]

    def _wants_kernels(self, level: int) -> bool:
        """Whether this level should be expanded by compiled loops (not loaded yet)."""
        if self.kernels is not None or not self.compilable or self.compiled is False:
            return False
        if level < LOAD_FROM:
            return False
        return bool(self.compiled) or level >= COMPILE_FROM or self._compiled_before()

    def _compiled_before(self) -> bool:
        """Whether an earlier run compiled this design's loops (checked once)."""
        if self.cached_kernels is None:
            from model.kernels import is_compiled

            self.cached_kernels = is_compiled(self.system, self.codec, self._kernel_plans())
        return self.cached_kernels

    def _compile(self) -> dict[int, Kernel]:
        """The compiled loop of every rule that can be enabled."""
        from model.kernels import load_kernels

        return load_kernels(self.system, self.codec, self._kernel_plans())

    def _expand_compiled(
        self,
        frontier: Keys,
        bounds: tuple[int, int],
        known: dict[str, tuple[int, int, int]],
        exercised: set[str],
    ) -> _Chunk:
        """`_expand_chunk` by the compiled loops: the same successors, in the same order."""
        assert self.kernels is not None
        begin, end = bounds
        keys = frontier[begin:end]
        chunk = _Chunk(begin)
        names = [p.name for p in self.system.properties]
        out_keys = np.empty(keys.shape, dtype=np.int64)
        out_rows = np.empty(len(keys), dtype=np.int32)
        for plan in self.plans:
            first = np.full(len(names), -1, dtype=np.int64)
            triggered = np.zeros(len(names), dtype=bool)
            look = np.array([n not in known and n not in chunk.violations for n in names])
            watch = np.array([n not in exercised and n not in chunk.exercised for n in names])
            count = self.kernels[plan.rule_id](
                keys, out_keys, out_rows, first, triggered, look, watch
            )
            if not count:
                continue
            chunk.successors[plan.rule_id] = (out_keys[:count].copy(), out_rows[:count] + begin)
            chunk.transitions += count
            for p, name in enumerate(names):
                if first[p] >= 0:
                    chunk.violations[name] = (plan.rule_id, begin + int(first[p]))
                if triggered[p]:
                    chunk.exercised.add(name)
        return chunk

    def _expand_chunk(
        self,
        frontier: Keys,
        bounds: tuple[int, int],
        known: dict[str, tuple[int, int, int]],
        exercised: set[str],
    ) -> _Chunk:
        """Apply every rule to one chunk of the level."""
        if self.kernels is not None:
            return self._expand_compiled(frontier, bounds, known, exercised)
        begin, end = bounds
        keys = frontier[begin:end]
        columns = _Columns(self.codec, keys)
        whole = Vars(self.layout, columns)
        chunk = _Chunk(begin)
        for plan in self.plans:
            rows = np.flatnonzero(_as_mask(plan.rule.guard(whole), len(keys)))
            if not rows.size:
                continue
            selected = _Rows(columns, self.codec, keys, rows)
            view = Vars(self.layout, selected)
            targets = _successor_keys(self.codec, selected.keys, view, plan.rule.effect(view))
            chunk.successors[plan.rule_id] = (targets, (rows + begin).astype(np.int32))
            chunk.transitions += int(rows.size)
            self._note_properties(chunk, plan, view, rows + begin, known, exercised)
            if self.on_edges is not None:
                chunk.edges.append(self._edge_batch(plan, view, selected.keys, targets))
        return chunk

    def _note_properties(
        self,
        chunk: _Chunk,
        plan: RulePlan,
        view: Vars,
        rows: np.ndarray,
        known: dict[str, tuple[int, int, int]],
        exercised: set[str],
    ) -> None:
        """Record the chunk's first violation of each property, and which were exercised."""
        for prop in plan.triggerable:
            if prop.name in exercised or prop.name in chunk.exercised:
                continue
            if _as_mask(prop.triggered(view, plan.rule), rows.size).any():
                chunk.exercised.add(prop.name)
        for prop in plan.violable:
            if prop.name in known or prop.name in chunk.violations:
                continue
            hits = np.flatnonzero(_as_mask(prop.violated(view, plan.rule), rows.size))
            if hits.size:
                chunk.violations[prop.name] = (plan.rule_id, int(rows[hits[0]]))

    def _edge_batch(self, plan: RulePlan, view: Vars, sources: Keys, targets: Keys) -> EdgeBatch:
        """One rule's transitions out of a chunk, for the edge visitor."""
        count = len(sources)
        violations = {
            prop.name: (
                _as_mask(prop.violated(view, plan.rule), count).copy()
                if prop in plan.violable
                else np.zeros(count, dtype=bool)
            )
            for prop in self.system.properties
        }
        return EdgeBatch(
            plan.rule, self.codec.numbers(sources), self.codec.numbers(targets), violations
        )

    def _merge(
        self, search: _Search, chunks: list[_Chunk], offset: int, depth: int
    ) -> tuple[Keys, np.ndarray, np.ndarray]:
        """Join the chunks' findings in rule order, then row order.

        Each chunk's successors are copied into the level's arrays and dropped at once, so
        the level is never held twice.
        """
        for chunk in chunks:
            search.transitions += chunk.transitions
            search.exercised |= chunk.exercised
            for name, (rule_id, row) in chunk.violations.items():
                candidate = (offset + row, rule_id, depth + 1)
                current = search.first_violation.get(name)
                if current is None or (
                    current[2] == depth + 1 and (rule_id, offset + row) < (current[1], current[0])
                ):
                    search.first_violation[name] = candidate
            if self.on_edges is not None:
                for batch in chunk.edges:
                    self.on_edges(batch)
        total = sum(chunk.transitions for chunk in chunks)
        shape = (total,) if not self.codec.wide else (total, self.codec.words)
        keys = np.empty(shape, dtype=np.int64)
        sources = np.empty(total, dtype=np.int32)
        rule_ids = np.empty(total, dtype=self.action_type)
        filled = 0
        for plan in self.plans:
            for chunk in chunks:
                found = chunk.successors.pop(plan.rule_id, None)
                if found is not None:
                    end = filled + len(found[1])
                    keys[filled:end], sources[filled:end] = found
                    rule_ids[filled:end] = plan.rule_id
                    filled = end
        return keys, sources, rule_ids

    # ----- admitting new states ---------------------------------------------------------

    def _canonical(self, keys: Keys) -> Keys:
        """Canonical keys (smallest among worker renamings), computed in chunks."""
        assert self.canonicalizer is not None
        parts = []
        for begin, end in self._chunks(len(keys)):
            part = keys[begin:end]
            columns = [self.codec.column(part, i) for i in range(len(self.layout.columns))]
            rows = np.stack(columns, axis=1)
            parts.append(self.canonicalizer.keys(rows))
        return concat(parts, self.codec)

    def _admit(
        self,
        search: _Search,
        keys: Keys,
        sources: np.ndarray,
        rule_of: np.ndarray,
        offset: int,
        pool: ThreadPoolExecutor | None,
    ) -> Keys:
        """Keep the successors not seen before (first parent wins); return the new frontier."""
        if self.canonicalizer is not None and len(keys):
            keys = self._canonical(keys)
        first = search.seen.add(keys, pool if len(keys) >= PARALLEL_FROM else None)
        unique = keys[first]
        order = (
            np.argsort(unique)
            if not self.codec.wide
            else np.lexsort(tuple(unique[:, w] for w in range(self.codec.words - 1, -1, -1)))
        )
        unique, first = unique[order], first[order]
        room = self.max_states - search.states
        if len(unique) > room:
            unique, first = unique[:room], first[:room]
            search.stopped_by = f"state budget of {self.max_states:,} states reached"
        parents = sources[first]
        search.offsets.append(search.states)
        search.parents.append(np.where(parents >= 0, parents + offset, -1).astype(self.parent_type))
        search.actions.append(rule_of[first].astype(self.action_type))
        search.states += len(unique)
        return unique

    # ----- counterexamples --------------------------------------------------------------

    def _chain_to(self, search: _Search, index: int) -> list[int]:
        """State indices from the start to `index`."""
        chain = [index]
        while search.parent(chain[-1]) >= 0:
            chain.append(search.parent(chain[-1]))
        return chain[::-1]

    def _verdicts(self, search: _Search) -> dict[str, PropertyVerdict]:
        """One verdict per property, with the counterexample's actions when violated."""
        complete = search.stopped_by is None
        verdicts = {}
        for prop in self.system.properties:
            found = search.first_violation.get(prop.name)
            if found is None:
                status = exploration_status(False, complete, prop.name in search.exercised)
                verdicts[prop.name] = PropertyVerdict(prop.name, status)
                continue
            source, rule_id, length = found
            chain = self._chain_to(search, source)
            path = [*(search.action(i) for i in chain[1:]), rule_id]
            steps = self._realise(path, prop)
            assert len(steps) == length
            verdicts[prop.name] = PropertyVerdict(prop.name, Status.VIOLATED, length, tuple(steps))
        return verdicts

    def _realise(self, rule_ids: list[int], prop: Property) -> list[Action]:
        """Turn a path of rule ids into real actions (under symmetry, undo the renamings).

        Under symmetry each rule id was taken from an orbit's representative; replaying the
        representatives gives the orbit of each step, and from the concrete start one
        enabled step leads into each of them in turn.
        """
        rules = self.system.rules
        if self.canonicalizer is None:
            return [rules[i].action for i in rule_ids]
        representative = self._representative(self.start)
        state = self.start
        steps: list[Action] = []
        for rule_id in rule_ids[:-1]:
            target = self._representative(self.system.apply(representative, rules[rule_id]))
            state, action = self._step_into_orbit(state, target)
            steps.append(action)
            representative = target
        for successor in self.system.successors(state):
            if prop.name in successor.violations:
                steps.append(successor.rule.action)
                return steps
        raise AssertionError("symmetric counterexample could not be realised")

    def _representative(self, state: State) -> State:
        """The orbit representative of a state (the renaming with the smallest key)."""
        assert self.canonicalizer is not None
        key = self.canonicalizer.keys(np.array([state], dtype=np.int64))
        return tuple(int(self.codec.column(key, i)[0]) for i in range(len(state)))

    def _step_into_orbit(self, state: State, target: State) -> tuple[State, Action]:
        """An enabled step from a concrete state into the orbit of `target`."""
        for successor in self.system.successors(state):
            if self._representative(successor.state) == target:
                return successor.state, successor.rule.action
        raise AssertionError("no step reaches the recorded orbit")


def explore(
    design: Design,
    bounds: Bounds,
    *,
    symmetry: bool = False,
    max_states: int = DEFAULT_MAX_STATES,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    progress: ProgressCallback | None = None,
    max_depth: int | None = None,
    start: State | None = None,
    on_edges: EdgeVisitor | None = None,
    threads: int | None = None,
    compiled: bool | None = None,
) -> Exploration:
    """Explore a design within bounds; the main entry point of every engine that counts.

    `max_depth` explores only runs of at most that many steps (used to show that no
    shorter run than a counterexample violates its property). `start` explores from a
    reachable state other than the initial one (the playground's "finish from here"); the
    counterexamples then start there too. `on_edges` is shown every transition as it is
    found (the state-space page builds its graph this way, from the same search).
    `threads` expands large levels on that many threads (default: two where a second
    core is idle), and `compiled` expands levels of `LOAD_FROM` states or more by compiled
    loops (True), never (False), or when they are already compiled or the level is large
    (None); the result depends on neither.
    """
    system = System(design, bounds)
    if start is not None:
        system.layout.check_state(start)
    explorer = Explorer(
        system,
        symmetry,
        max_states,
        max_seconds,
        progress,
        max_depth,
        start,
        on_edges,
        threads,
        compiled,
    )
    return explorer.run()


def compile_loops(design: Design, bounds: Bounds) -> None:
    """Compile the design's loops for these bounds ahead of a search (as pan is compiled
    before it searches), or load them if an earlier run compiled them."""
    Explorer(System(design, bounds))._compile()
