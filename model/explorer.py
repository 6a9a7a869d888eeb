"""Exhaustive breadth-first exploration of every interleaving within the bounds.

The explorer evaluates the same rules as the step interpreter, but on a whole BFS level
at once: each state column is a numpy array, so a guard is one vectorised comparison and
an effect one vectorised update. States are packed into int64 keys (mixed radix, see
`Layout`), a successor's key is its parent's key plus the weighted change of the columns
the action writes, and deduplication is sorting. Counterexamples are lists of action
instances, reconstructed from parent links and replayed through the interpreter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from model.design import Bounds, Design
from model.layout import Layout, Vars
from model.properties import Property
from model.rules import Action, Rule
from model.symmetry import Canonicalizer
from model.system import State, System
from model.verdicts import PropertyVerdict, Status, exploration_status

DEFAULT_MAX_STATES: Final = 3_000_000
DEFAULT_MAX_SECONDS: Final = 60.0


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


@dataclass
class _Search:
    """Mutable bookkeeping of one run (kept private to this module)."""

    keys: list[np.ndarray] = field(default_factory=list)
    parents: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    seen: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    states: int = 0
    transitions: int = 0
    first_violation: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    exercised: set[str] = field(default_factory=set)
    stopped_by: str | None = None


class _Columns(Sequence[np.ndarray]):
    """Columns of the states selected by `rows`, fetched lazily and cached."""

    def __init__(self, columns: list[np.ndarray], rows: np.ndarray) -> None:
        self._columns = columns
        self._rows = rows
        self._cache: dict[int, np.ndarray] = {}

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        if i not in self._cache:
            self._cache[i] = self._columns[i][self._rows]
        return self._cache[i]

    def __len__(self) -> int:
        return len(self._columns)


def decode(layout: Layout, keys: np.ndarray) -> list[np.ndarray]:
    """Column arrays of the states with these keys."""
    return [
        (keys // stride) % size for stride, size in zip(layout.strides, layout.sizes, strict=True)
    ]


def _as_mask(condition: object, count: int) -> np.ndarray:
    """A guard's value as a boolean array over the level (constants broadcast)."""
    return np.broadcast_to(np.asarray(condition, dtype=bool), (count,))


def _key_change(layout: Layout, view: Vars, changes: dict[str, object]) -> np.ndarray | int:
    """How much an effect changes the packed key: sum of stride x (new - old)."""
    total: np.ndarray | int = 0
    for column, value in changes.items():
        stride = layout.strides[layout.index[column]]
        total = total + stride * (np.asarray(value, dtype=np.int64) - view[column])
    return total


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
    ) -> None:
        self.system = system
        self.on_edges = on_edges
        self.layout = system.layout
        self.symmetry = symmetry
        self.canonicalizer = Canonicalizer(self.layout) if symmetry else None
        self.max_states = max_states
        self.max_seconds = max_seconds
        self.progress = progress
        self.max_depth = max_depth
        self.start = start if start is not None else system.initial()

    def run(self) -> Exploration:
        """Explore every reachable state (or up to a budget) and collect the verdicts."""
        started = time.perf_counter()
        search = _Search()
        first = np.array([self.layout.pack(self.start)], dtype=np.int64)
        frontier = self._admit(search, first, np.full(1, -1), np.full(1, -1))
        level_sizes = [1]
        depth = 0
        while frontier.size:
            if self.max_depth is not None and depth >= self.max_depth:
                search.stopped_by = f"depth limit of {self.max_depth} reached"
                break
            offset = search.states - frontier.size
            level = self._expand(search, frontier, offset, depth, started)
            if level is None:
                break
            keys, parents, actions = level
            frontier = self._admit(search, keys, parents, actions)
            if frontier.size:
                depth += 1
                level_sizes.append(int(frontier.size))
            if self.progress:
                self.progress(
                    Progress(
                        depth,
                        search.states,
                        search.transitions,
                        int(frontier.size),
                        time.perf_counter() - started,
                    )
                )
            if search.stopped_by:
                break
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

    def _expand(
        self, search: _Search, frontier: np.ndarray, offset: int, depth: int, started: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Successor keys, parent indices and rule ids of one level; None if time ran out."""
        columns = decode(self.layout, frontier)
        whole = Vars(self.layout, columns)
        keys, parents, actions = [], [], []
        for rule_id, rule in enumerate(self.system.rules):
            rows = np.flatnonzero(_as_mask(rule.guard(whole), frontier.size))
            if rows.size:
                view = Vars(self.layout, _Columns(columns, rows))
                keys.append(frontier[rows] + _key_change(self.layout, view, rule.effect(view)))
                parents.append(rows + offset)
                actions.append(np.full(rows.size, rule_id, dtype=np.int16))
                search.transitions += int(rows.size)
                self._note_violations(search, view, rule, rule_id, rows + offset, depth + 1)
                if self.on_edges is not None:
                    self._visit(view, rule, frontier[rows], keys[-1])
            if time.perf_counter() - started > self.max_seconds:
                search.stopped_by = f"time budget of {self.max_seconds:g} s reached"
                return None
        if not keys:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int16)
        return np.concatenate(keys), np.concatenate(parents), np.concatenate(actions)

    def _note_violations(
        self,
        search: _Search,
        view: Vars,
        rule: Rule,
        rule_id: int,
        sources: np.ndarray,
        length: int,
    ) -> None:
        """Record the first violating transition of each property, and which were exercised."""
        for prop in self.system.properties:
            if (
                prop.name not in search.exercised
                and _as_mask(prop.triggered(view, rule), sources.size).any()
            ):
                search.exercised.add(prop.name)
            if prop.name in search.first_violation:
                continue
            hits = np.flatnonzero(_as_mask(prop.violated(view, rule), sources.size))
            if hits.size:
                search.first_violation[prop.name] = (int(sources[hits[0]]), rule_id, length)

    def _visit(self, view: Vars, rule: Rule, sources: np.ndarray, targets: np.ndarray) -> None:
        """Hand one rule's transitions out of a level to the edge visitor."""
        assert self.on_edges is not None
        violations = {
            prop.name: _as_mask(prop.violated(view, rule), sources.size)
            for prop in self.system.properties
        }
        self.on_edges(EdgeBatch(rule, sources, targets, violations))

    def _admit(
        self, search: _Search, keys: np.ndarray, parents: np.ndarray, actions: np.ndarray
    ) -> np.ndarray:
        """Keep the successors not seen before (first parent wins); return the new frontier."""
        if self.canonicalizer is not None and keys.size:
            rows = np.stack(decode(self.layout, keys), axis=1)
            keys = self.canonicalizer.keys(rows)
        unique, first = np.unique(keys, return_index=True)
        if search.seen.size:
            where = np.minimum(np.searchsorted(search.seen, unique), search.seen.size - 1)
            fresh = search.seen[where] != unique
            unique, first = unique[fresh], first[fresh]
        room = self.max_states - search.states
        if unique.size > room:
            unique, first = unique[:room], first[:room]
            search.stopped_by = f"state budget of {self.max_states:,} states reached"
        search.keys.append(unique)
        search.parents.append(parents[first])
        search.actions.append(actions[first])
        search.seen = np.sort(np.concatenate((search.seen, unique)), kind="stable")
        search.states += int(unique.size)
        return unique

    def _verdicts(self, search: _Search) -> dict[str, PropertyVerdict]:
        """One verdict per property, with the counterexample's actions when violated."""
        keys = np.concatenate(search.keys)
        parents = np.concatenate(search.parents)
        actions = np.concatenate(search.actions)
        complete = search.stopped_by is None
        verdicts = {}
        for prop in self.system.properties:
            found = search.first_violation.get(prop.name)
            if found is None:
                status = exploration_status(False, complete, prop.name in search.exercised)
                verdicts[prop.name] = PropertyVerdict(prop.name, status)
                continue
            source, rule_id, length = found
            path = [*_path_to(source, parents, actions), rule_id]
            steps = self._realise(path, keys, parents, source, prop)
            assert len(steps) == length
            verdicts[prop.name] = PropertyVerdict(prop.name, Status.VIOLATED, length, tuple(steps))
        return verdicts

    def _realise(
        self,
        rule_ids: list[int],
        keys: np.ndarray,
        parents: np.ndarray,
        source: int,
        prop: Property,
    ) -> list[Action]:
        """Turn a path of rule ids into real actions (under symmetry, undo the renamings)."""
        rules = self.system.rules
        if self.canonicalizer is None:
            return [rules[i].action for i in rule_ids]
        chain = _chain_to(source, parents)
        state = self.start
        steps: list[Action] = []
        for index in chain[1:]:
            state, action = self._step_into_orbit(state, int(keys[index]))
            steps.append(action)
        for successor in self.system.successors(state):
            if prop.name in successor.violations:
                steps.append(successor.rule.action)
                return steps
        raise AssertionError("symmetric counterexample could not be realised")

    def _step_into_orbit(self, state: State, target_key: int) -> tuple[State, Action]:
        """An enabled step from a concrete state into the orbit with this canonical key."""
        assert self.canonicalizer is not None
        for successor in self.system.successors(state):
            row = np.array([successor.state], dtype=np.int64)
            if int(self.canonicalizer.keys(row)[0]) == target_key:
                return successor.state, successor.rule.action
        raise AssertionError("no step reaches the recorded orbit")


def _chain_to(index: int, parents: np.ndarray) -> list[int]:
    """State indices from the initial state to `index`."""
    chain = [index]
    while parents[chain[-1]] >= 0:
        chain.append(int(parents[chain[-1]]))
    return chain[::-1]


def _path_to(index: int, parents: np.ndarray, actions: np.ndarray) -> list[int]:
    """Rule ids of the BFS-tree path from the initial state to `index`."""
    return [int(actions[i]) for i in _chain_to(index, parents)[1:]]


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
) -> Exploration:
    """Explore a design within bounds; the main entry point of every engine that counts.

    `max_depth` explores only runs of at most that many steps (used to show that no
    shorter run than a counterexample violates its property). `start` explores from a
    reachable state other than the initial one (the playground's "finish from here"); the
    counterexamples then start there too. `on_edges` is shown every transition as it is
    found (the state-space page builds its graph this way, from the same search).
    """
    system = System(design, bounds)
    if start is not None:
        system.layout.check_state(start)
    explorer = Explorer(
        system, symmetry, max_states, max_seconds, progress, max_depth, start, on_edges
    )
    return explorer.run()
